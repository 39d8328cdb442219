//! How a report was made, in every command's JSON (`made_by`), as hyperfine
//! and trtexec record their command: mge's version, the runtime (its
//! version, library and files with their SHA-256), the engine options and
//! the CPU. `--repro` writes the same runtime and CPU (`runtime.json`,
//! `cpu.json`).

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::options::EngineOption;
use crate::runtime::{self, Choice, FileRecord, Hashing, Located, Record};

/// What a command knows of how its report was made; described (`MadeBy`)
/// only for JSON.
pub struct Making<'a> {
    /// The runtime asked for; `None` where the command ran no engine.
    runtime: Option<&'a Choice>,
    /// As the engine gave it, where this process loaded it.
    version: Option<(i32, i32, i32)>,
    engine: &'a [EngineOption],
}

impl<'a> Making<'a> {
    /// A report made by the engine `runtime` chooses, under the `engine`
    /// options, by a process that loaded it (`version`) or had it run in others.
    pub fn new(runtime: &'a Choice, version: Option<(i32, i32, i32)>, engine: &'a [EngineOption]) -> Making<'a> {
        Making {
            runtime: Some(runtime),
            version,
            engine,
        }
    }

    /// A report made without the engine (`compare` of tensors, a profile read from a file).
    pub fn without_engine() -> Making<'static> {
        Making {
            runtime: None,
            version: None,
            engine: &[],
        }
    }

    /// The description, with the runtime as it is found now (the one that
    /// ran: a child is handed what its parent found).
    pub fn describe(&self) -> Result<MadeBy> {
        let runtime = match self.runtime.map(runtime::locate) {
            Some(Ok(located)) => {
                let version = match self.version {
                    Some((major, minor, patch)) => Some(format!("{major}.{minor}.{patch}")),
                    None => installed_version(Some(&located)),
                };
                Some(runtime_used(Some(&located), version)?)
            }
            Some(Err(_)) | None => None,
        };
        Ok(MadeBy {
            mge: env!("CARGO_PKG_VERSION"),
            runtime,
            engine_options: self.engine.iter().flat_map(shared_words).collect(),
            cpu: Cpu::here(),
        })
    }
}

/// An option's words as a shared report may hold them: a key given on the
/// command line is left out.
fn shared_words(option: &EngineOption) -> Vec<String> {
    match option {
        EngineOption::ModelKey(key) if !key.starts_with('@') => {
            vec!["--model-key".to_string(), "(not recorded)".to_string()]
        }
        _ => option.args(),
    }
}

/// `made_by` of a JSON report.
#[derive(Serialize)]
pub struct MadeBy {
    /// mge's version.
    mge: &'static str,
    /// The runtime that ran the engine; `null` where none was used or found.
    runtime: Option<RuntimeUsed>,
    /// The engine options the command ran under, as words: the user's and
    /// the command's own defaults (`check`'s `--cpu-inplace`).
    engine_options: Vec<String>,
    cpu: Cpu,
}

pub fn sha256(path: &Path) -> Result<String> {
    let file = fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hashing = Hashing::new(file);
    std::io::copy(&mut hashing, &mut std::io::sink()).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hashing.finish().sha256)
}

/// The version an install of the runtime recorded.
pub fn installed_version(runtime: Option<&Located>) -> Option<String> {
    let install = runtime?.install.as_ref()?;
    Some(Record::read(install).ok()??.version)
}

/// A runtime: `made_by.runtime`, and `--repro`'s `runtime.json`.
#[derive(Serialize)]
pub struct RuntimeUsed {
    /// As the engine gave it, else as its install recorded it.
    version: Option<String>,
    library: Option<String>,
    found_by: Option<String>,
    install: Option<String>,
    files: Vec<FileRecord>,
    /// Where the SHA-256 come from.
    hashes: &'static str,
}

pub fn runtime_used(runtime: Option<&Located>, version: Option<String>) -> Result<RuntimeUsed> {
    let Some(located) = runtime else {
        return Ok(RuntimeUsed {
            version,
            library: None,
            found_by: None,
            install: None,
            files: Vec::new(),
            hashes: "none: no runtime was found",
        });
    };
    let recorded = located.install.as_deref().map(Record::read).transpose()?.flatten();
    let (files, hashes) = match recorded {
        Some(record) => (
            record.files,
            "the install's record of its files (mge checks their sizes before every load; `mge runtime info` their contents)",
        ),
        None => {
            let size = fs::metadata(&located.path).map_or(0, |metadata| metadata.len());
            let file = FileRecord {
                path: std::path::absolute(&located.path)?.display().to_string(),
                size,
                sha256: sha256(&located.path)?,
            };
            (vec![file], "the library's, hashed when the report was written")
        }
    };
    Ok(RuntimeUsed {
        version,
        library: Some(std::path::absolute(&located.path)?.display().to_string()),
        found_by: Some(located.origin.to_string()),
        install: located.install.as_ref().map(|dir| dir.display().to_string()),
        files,
        hashes,
    })
}

/// The first processor of `/proc/cpuinfo`, and the machine around it:
/// `made_by.cpu`, and `--repro`'s `cpu.json`.
#[derive(Serialize)]
pub struct Cpu {
    vendor: Option<String>,
    model_name: Option<String>,
    family: Option<String>,
    model: Option<String>,
    stepping: Option<String>,
    microcode: Option<String>,
    flags: Vec<String>,
    /// Processors the kernel lists, and those this process may run on.
    logical_cpus: usize,
    available_cpus: usize,
    architecture: &'static str,
    kernel: Option<String>,
}

impl Cpu {
    pub fn here() -> Cpu {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let first = cpuinfo.split("\n\n").next().unwrap_or_default();
        let field = |key: &str| {
            first.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                (name.trim() == key).then(|| value.trim().to_string())
            })
        };
        Cpu {
            vendor: field("vendor_id"),
            model_name: field("model name"),
            family: field("cpu family"),
            model: field("model"),
            stepping: field("stepping"),
            microcode: field("microcode"),
            flags: field("flags")
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            logical_cpus: cpuinfo.lines().filter(|line| line.starts_with("processor")).count(),
            available_cpus: std::thread::available_parallelism().map_or(1, usize::from),
            architecture: std::env::consts::ARCH,
            kernel: fs::read_to_string("/proc/sys/kernel/osrelease")
                .ok()
                .map(|release| release.trim().to_string()),
        }
    }
}
