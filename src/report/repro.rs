//! `--repro DIR` of `run`, `check` and `compare`: for each model that crashed,
//! hung, exited or failed its outputs, a folder that reproduces the failure
//! on its own, a bug report in one folder:
//!
//! ```text
//! DIR/NAME/            NAME: the model's stem (NAME-2, ... when taken)
//!   model.mge          the model, copied (compare: a.mge and b.mge), once for
//!                      all of DIR's new folders: the others' are hard links to
//!                      it where the file system takes them; one larger than
//!                      COPY_LIMIT stays where it is: model.mge.sha256 holds
//!                      its SHA-256 and path, as sha256sum writes them
//!   feeds/             the exact values the engine was fed, as .npy:
//!                      feeds/NAME.npy with feeds/inputs.json ([[input, file], ...]),
//!                      or feeds/N/ for embedded testcase N
//!   expect/            the files the command compares outputs with (run --expect)
//!   fast-run.cache     a fast-run cache the engine was given (tensorrt.cache alike)
//!   command.sh         the command line that reproduces the failure from inside the folder
//!   options.txt        the engine options, as words
//!   runtime.json       the runtime: its version, library, and files with their SHA-256
//!   cpu.json           the CPU (vendor, model, flags) and the kernel
//!   engine.log         what failed, and what the engine's process printed on stderr
//!   README.txt         what failed, how to reproduce it, and what each file is
//!   reduced.mge        with --reduce: the smallest part of the model found to fail
//!                      alike, which command.sh runs then; full-command.sh runs the model
//! ```
//!
//! The whole of DIR's new folders is written at the end or nothing is
//! (`StagedSet`); the children record their feeds into the staging folder
//! (`supervise::repro_record`), whence a failing model's are moved into its
//! folder, and a passing one's removed as it passes (`discard_record`).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use super::made_by::{installed_version, runtime_used, sha256, Cpu};
use crate::feeds::named_spec;
use crate::input_files::FileId;
use crate::messages::{say, warning_line};
use crate::mge_command::MgeCommand;
use crate::mge_command::RECORD_ENV;
use crate::options::EngineOption;
use crate::output_files::{claim_set, npy_file_stem, StagedSet};
use crate::runtime::{self, Choice, Located};
use crate::supervise::repro_record::ChildRecord;
use crate::text::{printable, printable_lines};

/// Models up to this size are copied into the folder; larger ones are named
/// by their path and SHA-256 (a model zoo's failures would fill the disk).
const COPY_LIMIT: u64 = 256 << 20;

/// Where a reproducing command reads a key given inline, which the folder does not hold.
const KEY_FILE: &str = "model.key";

/// The folder, inside the staging folder, where the children record.
const RECORDS: &str = ".records";

/// Variables of these prefixes are the engine's families: those the runtime
/// reads (the test faults' stand-in included) a reproducing command sets as they were.
const ENGINE_VARIABLES: [&str; 4] = ["MGB_", "MGE_", "MEGDNN_", "MEGENGINE_"];

/// Of those, the ones the command does not carry: the runtime chosen goes
/// as `--lite-lib` or `--runtime-version`, where the runtimes and the
/// algorithm cache are kept and whether the cache is used are the machine's
/// own, and the record folder is a parent's for its child.
const LOCAL_VARIABLES: [&str; 5] = [
    "MGE_LITE_LIB",
    "MGE_RUNTIME_VERSION",
    "MGE_HOME",
    "MGE_NO_ALGO_CACHE",
    RECORD_ENV,
];

/// Claims `dir` for `--repro`, in a command's settings: after the command's
/// inputs and other outputs, before any work.
pub fn claim(dir: &Path) -> Result<()> {
    claim_set("--repro", dir).with_context(|| format!("--repro {}", dir.display()))
}

/// Removes what a child recorded into `record` (`Repro::record_folder`) once
/// its folder took what it needs, or the model passed: a passing model's
/// feeds would fill the staging folder model by model (a sweep's shapes, a
/// check's models).
pub fn discard_record(record: &Path) {
    let _ = fs::remove_dir_all(record);
}

/// `--repro DIR` (claimed by `claim`), staged while the command works, written by `finish`.
pub struct Repro {
    dir: PathBuf,
    set: StagedSet,
    /// The folders written so far, by name, with the line that reproduces
    /// each, and whether `--reduce` found its failure flaky.
    written: Vec<(String, String, bool)>,
    /// The models in them so far, each kept once (a sweep's shapes share one).
    models: Vec<(FileId, KeptModel)>,
}

/// How a folder holds a model.
#[derive(Clone)]
enum KeptModel {
    /// Copied into the set at this path (relative to it), which the next
    /// folder links to.
    Copied(PathBuf),
    /// Left where it is (larger than `COPY_LIMIT`): its absolute path, and
    /// the line of its `.sha256` file.
    Summed(PathBuf, String),
}

/// One failing model, as its command saw it fail.
pub struct FailingModel<'a> {
    /// The model the folder is named after.
    pub model: &'a Path,
    /// What the child recorded (`Repro::record_folder`), if it was asked to.
    pub record: Option<PathBuf>,
    /// What failed, in one line, and what the engine's process printed.
    pub failure: String,
    pub engine_log: String,
    /// The runtime the engine loaded, and the one the user chose.
    pub runtime: Option<&'a Located>,
    pub choice: &'a Choice,
}

/// A failing model's folder, while its command line is built: what the
/// command reads is put into it by these methods, which name it as the
/// command must from inside the folder.
pub struct Folder<'r> {
    set: &'r mut StagedSet,
    models: &'r mut Vec<(FileId, KeptModel)>,
    name: String,
    /// The feeds of a fed run, as `-i` specs of files in the folder.
    feeds: Vec<String>,
    /// The lines of `options.txt`, and of README's list of files.
    options: Vec<String>,
    files: Vec<String>,
    /// The engine options as the command gives them from inside the folder (`options`).
    placed: Vec<EngineOption>,
    /// `--reduce`'s smaller reproducer, or why there is none.
    reduction: Option<Reduction>,
}

/// What `--reduce` found, for a folder.
pub enum Reduction {
    /// `graph`, written as `reduced.mge`, fails alike when `command` (from
    /// inside the folder) runs it; `about` says what it is and how it was found.
    Reduced {
        graph: Vec<u8>,
        command: MgeCommand,
        about: String,
    },
    /// Why the model was not reduced.
    NotReduced(String),
    /// The failure came and went (what was seen, in a line): no part of the
    /// model is claimed to reproduce it.
    Flaky(String),
}

impl Repro {
    /// Stages the folder `dir`, which the command's settings claimed (`claim`).
    pub fn stage(dir: &Path) -> Result<Repro> {
        let context = || format!("--repro {}", dir.display());
        let set = StagedSet::new(dir).with_context(context)?;
        fs::create_dir(set.path().join(RECORDS)).with_context(context)?;
        Ok(Repro {
            dir: dir.to_path_buf(),
            set,
            written: Vec::new(),
            models: Vec::new(),
        })
    }

    /// A folder for a child to record into (`MgeCommand::record_for_repro`), by `key`.
    pub fn record_folder(&self, key: &str) -> PathBuf {
        self.set.path().join(RECORDS).join(key)
    }

    /// Writes the folder of `failing`; `command` names what it reads through the
    /// `Folder` and returns the command line that reproduces the failure.
    pub fn add(
        &mut self,
        failing: FailingModel,
        command: impl FnOnce(&mut Folder) -> Result<MgeCommand>,
    ) -> Result<()> {
        let stem = npy_file_stem(&failing.model.file_stem().unwrap_or_default().to_string_lossy());
        self.add_named(&stem, failing, command).map(drop)
    }

    /// `add`, the folder named `stem` (`stem-2`, ... when taken) rather than
    /// after the model; returns where the folder goes.
    pub fn add_named(
        &mut self,
        stem: &str,
        failing: FailingModel,
        command: impl FnOnce(&mut Folder) -> Result<MgeCommand>,
    ) -> Result<String> {
        let name = self.free_name(stem);
        let written = self.write_folder(&name, failing, command);
        if written.is_err() {
            // A folder half written is none, and no later folder links to its model.
            let _ = fs::remove_dir_all(self.set.path().join(&name));
            self.models
                .retain(|(_, kept)| !matches!(kept, KeptModel::Copied(copy) if copy.starts_with(&name)));
        }
        written
    }

    /// `add_named`'s folder, `name`.
    fn write_folder(
        &mut self,
        name: &str,
        failing: FailingModel,
        command: impl FnOnce(&mut Folder) -> Result<MgeCommand>,
    ) -> Result<String> {
        let recorded = failing.record.as_deref().map(ChildRecord::read).transpose()?;
        let staged = self.set.path().join(name);
        fs::create_dir(&staged).with_context(|| format!("cannot write {}", self.dir.join(name).display()))?;
        let mut feeds = Vec::new();
        let mut files = Vec::new();
        if let Some(record) = &recorded {
            if let Some(recorded_feeds) = &record.feeds {
                fs::rename(recorded_feeds, staged.join("feeds"))
                    .with_context(|| format!("cannot write {}", self.dir.join(name).join("feeds").display()))?;
                feeds = feed_specs(&record.fed);
                files.push(match record.fed.is_empty() {
                    true => "feeds/N/  the values each embedded testcase N fed the engine, as .npy (inputs.json: which input each file is)".to_string(),
                    false => "feeds/    the exact values the engine was fed, as .npy (inputs.json: which input each file is)".to_string(),
                });
            }
        }
        if feeds.is_empty() && files.is_empty() {
            files.push("(no feeds: the engine failed before it was fed)".to_string());
        }
        let mut folder = Folder {
            set: &mut self.set,
            models: &mut self.models,
            name: name.to_string(),
            feeds,
            options: Vec::new(),
            files,
            placed: Vec::new(),
            reduction: None,
        };
        let env = engine_environment(failing.runtime)?;
        let command = command(&mut folder)?
            .user_runtime(failing.choice)?
            .user_env(env.clone());
        let full_line = command.shell_line();
        let Folder {
            options,
            mut files,
            reduction,
            ..
        } = folder;
        let flaky = matches!(reduction, Some(Reduction::Flaky(_)));
        let (line, reduced) = self.add_reduction(name, reduction, &full_line, (failing.choice, env), &mut files)?;
        let version = recorded
            .as_ref()
            .and_then(|record| record.runtime_version.clone())
            .or_else(|| installed_version(failing.runtime));
        let texts = [
            ("command.sh", format!("#!/usr/bin/env bash\n# Reproduces the failure in README.txt; run it from inside this folder.\n{line}\n")),
            ("options.txt", options.join("\n") + "\n"),
            ("runtime.json", json(&runtime_used(failing.runtime, version.clone())?)?),
            ("cpu.json", json(&Cpu::here())?),
            ("engine.log", engine_log(&failing, recorded.as_ref())),
            ("README.txt", readme(&failing, &line, version.as_deref(), &files) + &reduced),
        ];
        for (file, text) in texts {
            self.set.add(Path::new(name).join(file), text.as_bytes())?;
        }
        // A shell runs it as `./command.sh` too.
        let script = staged.join("command.sh");
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .with_context(|| format!("cannot write {}", self.dir.join(name).join("command.sh").display()))?;
        let folder = self.dir.join(name).display().to_string();
        self.written.push((name.to_string(), line, flaky));
        Ok(folder)
    }

    /// `--reduce`'s files in the folder `name`: `reduced.mge` and `full-command.sh`
    /// (`full_line`) where it found a smaller reproducer, whose line has the
    /// runtime the user chose and the variables `env`. Returns the line
    /// `command.sh` runs, and what README says of the reduction.
    fn add_reduction(
        &mut self,
        name: &str,
        reduction: Option<Reduction>,
        full_line: &str,
        (choice, env): (&Choice, Vec<(OsString, OsString)>),
        files: &mut Vec<String>,
    ) -> Result<(String, String)> {
        let (graph, command, about) = match reduction {
            None => return Ok((full_line.to_string(), String::new())),
            Some(Reduction::NotReduced(why)) => {
                return Ok((
                    full_line.to_string(),
                    format!("\nNot reduced (--reduce): {}\n", printable(&why)),
                ))
            }
            Some(Reduction::Flaky(why)) => {
                return Ok((
                    full_line.to_string(),
                    format!(
                        "\nNot reduced (--reduce): the failure is flaky, and no part of the model is claimed to reproduce it: {}\n",
                        printable(&why)
                    ),
                ))
            }
            Some(Reduction::Reduced { graph, command, about }) => (graph, command, about),
        };
        let line = command.user_runtime(choice)?.user_env(env).shell_line();
        self.set.add(Path::new(name).join("reduced.mge"), &graph)?;
        let script = format!("#!/usr/bin/env bash\n# Runs the whole model, which fails as README.txt says; run it from inside this folder.\n{full_line}\n");
        self.set
            .add(Path::new(name).join("full-command.sh"), script.as_bytes())?;
        let staged = self.set.path().join(name).join("full-command.sh");
        fs::set_permissions(&staged, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .with_context(|| format!("cannot write {}", self.dir.join(name).join("full-command.sh").display()))?;
        files.push(
            "reduced.mge  the smallest part of the model found to fail (see below), which command.sh runs".into(),
        );
        files.push(
            "full-command.sh  the command line that runs the whole model, which fails as \"What failed\" says".into(),
        );
        let text = format!(
            "\nReduced (--reduce): {}\n\nThe whole model fails as \"What failed\" says above with full-command.sh, which runs:\n\n    {full_line}\n",
            printable_lines(&about)
        );
        Ok((line, text))
    }

    /// A folder name from `stem` that neither DIR nor this set has yet.
    fn free_name(&self, stem: &str) -> String {
        let stem = stem.to_string();
        let taken =
            |name: &String| self.written.iter().any(|(written, ..)| written == name) || self.dir.join(name).exists();
        std::iter::once(stem.clone())
            .chain((2..).map(|n| format!("{stem}-{n}")))
            .find(|name| !taken(name))
            .expect("an unbounded sequence has a free name")
    }

    /// Writes the folders added, once `added` (what adding them gave) holds,
    /// and says where each went and how to reproduce it, with a warning after
    /// it where `--reduce` found the failure flaky. A set that cannot be
    /// written is a warning, by `warn`: the command's own failure stays its error.
    pub fn finish(self, added: Result<()>, warn: impl Fn(String)) {
        match added.and_then(|()| self.commit()) {
            Ok(lines) => lines.iter().for_each(|line| say(line)),
            Err(err) => warn(format!("{err:#}")),
        }
    }

    /// The set written: the lines `finish` says.
    fn commit(self) -> Result<Vec<String>> {
        let Repro { dir, set, written, .. } = self;
        if written.is_empty() {
            return Ok(Vec::new());
        }
        fs::remove_dir_all(set.path().join(RECORDS)).with_context(|| format!("--repro {}", dir.display()))?;
        set.commit().with_context(|| format!("--repro {}", dir.display()))?;
        let mut lines = Vec::new();
        for (name, line, flaky) in &written {
            let folder = dir.join(name).display().to_string();
            lines.push(format!(
                "repro: wrote {}; to reproduce, from inside it run: {line}",
                printable(&folder)
            ));
            if *flaky {
                lines.push(warning_line(format!(
                    "the failure in {folder} is flaky: it did not come back every time it was run, and --reduce claims no part of the model (see its README.txt)"
                )));
            }
        }
        Ok(lines)
    }
}

impl Folder<'_> {
    /// The model `path` as `file` in the folder; one larger than
    /// `COPY_LIMIT` by its absolute path, its SHA-256 in `FILE.sha256`. A
    /// model that an earlier folder of the set holds is not copied again
    /// (a sweep's shapes fail on one model): the folder's file is a hard link
    /// to that copy, and a large model's SHA-256 is not computed again.
    pub fn model(&mut self, file: &str, path: &Path) -> Result<PathBuf> {
        let metadata = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        let id = FileId::of(&metadata);
        let kept = self
            .models
            .iter()
            .find(|(kept, _)| *kept == id)
            .map(|(_, how)| how.clone());
        let in_folder = Path::new(&self.name).join(file);
        match kept {
            Some(KeptModel::Copied(copy)) => self.set.link_in(in_folder.clone(), &copy)?,
            None if metadata.len() <= COPY_LIMIT => {
                self.set.copy_in(in_folder.clone(), path)?;
                self.models.push((id, KeptModel::Copied(in_folder.clone())));
            }
            Some(KeptModel::Summed(absolute, sum)) => return self.summed(file, absolute, &sum, metadata.len()),
            None => {
                let absolute = std::path::absolute(path)?;
                let sum = format!("{}  {}\n", sha256(&absolute)?, absolute.display());
                self.models.push((id, KeptModel::Summed(absolute.clone(), sum.clone())));
                return self.summed(file, absolute, &sum, metadata.len());
            }
        }
        self.files.push(format!("{file}  the model {}, copied", path.display()));
        Ok(PathBuf::from(file))
    }

    /// The model at `absolute`, of `size` bytes, named by its path in the
    /// command, its `sum` in `FILE.sha256`.
    fn summed(&mut self, file: &str, absolute: PathBuf, sum: &str, size: u64) -> Result<PathBuf> {
        self.set
            .add(Path::new(&self.name).join(format!("{file}.sha256")), sum.as_bytes())?;
        self.files.push(format!(
            "{file}.sha256  the model's SHA-256 and path: at {size} bytes it was not copied"
        ));
        Ok(absolute)
    }

    /// The file `source` copied into the folder as `file` (`expect/x.npy`), which the command names.
    pub fn file(&mut self, file: &str, source: &Path, what: &str) -> Result<PathBuf> {
        self.set.copy_in(Path::new(&self.name).join(file), source)?;
        self.files.push(format!("{file}  {what}"));
        Ok(PathBuf::from(file))
    }

    /// `-i` specs of the recorded feeds of a fed run (`NAME:feeds/FILE.npy`);
    /// none where the engine was not fed or ran embedded testcases.
    pub fn feeds(&self) -> &[String] {
        &self.feeds
    }

    /// `options` as the command gives them from inside the folder: a cache
    /// the engine reads copied in, other paths made absolute; listed in
    /// `options.txt` (after `label: ` where one command has several sets).
    pub fn options(&mut self, label: Option<&str>, options: &[EngineOption]) -> Result<Vec<EngineOption>> {
        let mut placed = Vec::new();
        for option in options {
            placed.push(match option {
                EngineOption::FastRunCache(cache) => EngineOption::FastRunCache(self.cache(
                    "fast-run.cache",
                    cache,
                    "the fast-run cache the engine read",
                )?),
                EngineOption::TensorRtCache(cache) => EngineOption::TensorRtCache(self.cache(
                    "tensorrt.cache",
                    cache,
                    "TensorRT's cache the engine read",
                )?),
                EngineOption::COprLib(library) => EngineOption::COprLib(std::path::absolute(library)?),
                EngineOption::ModelKey(key) => match key.strip_prefix('@') {
                    Some(file) => EngineOption::ModelKey(format!("@{}", std::path::absolute(file)?.display())),
                    None => self.key_to_supply(),
                },
                other => other.clone(),
            });
        }
        self.placed = placed.clone();
        let words: Vec<String> = placed.iter().flat_map(EngineOption::args).collect();
        let line = match words.is_empty() {
            true => "(none: the engine's defaults)".to_string(),
            false => shlex::try_join(words.iter().map(String::as_str)).expect("no argument holds a NUL"),
        };
        self.options.push(match label {
            Some(label) => format!("{label}: {line}"),
            None => line,
        });
        Ok(placed)
    }

    /// `--model-key @model.key` for a key given inline: a report meant to be
    /// shared holds no key, so the folder says to supply it.
    fn key_to_supply(&mut self) -> EngineOption {
        if !self.files.iter().any(|listed| listed.starts_with(KEY_FILE)) {
            self.files.push(format!(
                "{KEY_FILE}  not here: the model's key, which a report meant to be shared does not hold; \
                 write its raw bytes here (from hex: xxd -r -p <<< HEX > {KEY_FILE}) before running command.sh"
            ));
        }
        EngineOption::ModelKey(format!("@{KEY_FILE}"))
    }

    /// The engine options as `options` placed them last: what a command from
    /// inside the folder gives.
    pub fn placed_options(&self) -> &[EngineOption] {
        &self.placed
    }

    /// Where the folder is staged while it is written: its files so far.
    pub fn staged(&self) -> PathBuf {
        self.set.path().join(&self.name)
    }

    /// `--reduce`'s smaller reproducer of the failure, or why there is none.
    pub fn reduced(&mut self, reduction: Reduction) {
        self.reduction = Some(reduction);
    }

    /// A cache the engine reads and updates, copied in as `file` where it
    /// exists; the reproduction writes it there.
    fn cache(&mut self, file: &str, cache: &Path, what: &str) -> Result<PathBuf> {
        if cache.is_file() && !self.files.iter().any(|listed| listed.starts_with(file)) {
            self.file(file, cache, what)?;
        }
        Ok(PathBuf::from(file))
    }
}

/// `-i` specs of recorded feeds: `NAME:feeds/FILE`, or the file alone for a
/// model's only input whose name a spec cannot carry (`;` splits specs, `@`
/// starts a list, blanks around it are trimmed).
fn feed_specs(fed: &[(String, String)]) -> Vec<String> {
    feed_specs_in("feeds", fed)
}

/// `feed_specs` of feeds recorded in the folder's `folder` (`feeds`, `feeds/N`).
pub fn feed_specs_in(folder: &str, fed: &[(String, String)]) -> Vec<String> {
    fed.iter()
        .map(|(name, file)| named_spec(name, &format!("{folder}/{file}"), fed.len() == 1))
        .collect()
}

/// The variables of this process's environment that the runtime reads
/// (named in its libraries: see `runtime::variables_read`), of the engine's
/// families, by name; none where no runtime was found. Any other, such as a
/// token that merely shares a prefix, stays out of a report meant to be shared.
fn engine_environment(runtime: Option<&Located>) -> Result<Vec<(OsString, OsString)>> {
    let Some(located) = runtime else {
        return Ok(Vec::new());
    };
    let candidates: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| {
            ENGINE_VARIABLES.iter().any(|prefix| name.starts_with(prefix)) && !LOCAL_VARIABLES.contains(&name.as_str())
        })
        .collect();
    let mut vars: Vec<(OsString, OsString)> = runtime::variables_read(&located.path, &candidates)?
        .into_iter()
        .filter_map(|name| {
            let value = std::env::var_os(&name)?;
            Some((OsString::from(name), value))
        })
        .collect();
    vars.sort();
    Ok(vars)
}

/// `engine.log`: what failed, what the engine's process printed on stderr,
/// and what the engine printed on the stdout the tool captured.
fn engine_log(failing: &FailingModel, recorded: Option<&ChildRecord>) -> String {
    let printed = match failing.engine_log.is_empty() {
        true => "(nothing)\n",
        false => &failing.engine_log,
    };
    let mut log = format!(
        "{}\n\nWhat the engine's process printed on stderr:\n{printed}",
        failing.failure
    );
    if let Some(stdout) = recorded.and_then(|record| record.engine_stdout.as_deref()) {
        let _ = write!(
            log,
            "\nWhat the engine printed on stdout (its AssertEqual errors):\n{stdout}"
        );
    }
    log
}

fn json(value: &impl Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// `README.txt`.
fn readme(failing: &FailingModel, line: &str, version: Option<&str>, files: &[String]) -> String {
    let mut text = format!(
        "A reproducer written by mge {} (--repro).\n\nWhat failed: {}\nThe model: {}\n\n",
        env!("CARGO_PKG_VERSION"),
        printable(&failing.failure),
        printable(&failing.model.display().to_string())
    );
    let runtime = match version {
        Some(version) => format!("the MegEngine runtime {version} (`mge runtime install --version {version}`)"),
        None => "the MegEngine runtime (see runtime.json)".to_string(),
    };
    let _ = write!(
        text,
        "To reproduce it, with mge and {runtime} installed, run from inside this folder:\n\n    bash command.sh\n\nwhich runs:\n\n    {line}\n\nThe files:\n"
    );
    let listed = files.iter().map(String::as_str).chain([
        "command.sh  the command line above",
        "options.txt  the engine options, as words",
        "runtime.json  the runtime: its version, library, and files with their SHA-256",
        "cpu.json  the CPU (vendor, model, flags) and the kernel",
        "engine.log  what failed, and what the engine's process printed on stderr",
    ]);
    for file in listed {
        let _ = writeln!(text, "  {file}");
    }
    text
}
