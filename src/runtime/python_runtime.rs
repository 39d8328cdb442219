//! The runtime of a MegEngine that a Python environment has installed (its
//! `megenginelite/libs/` and `megengine/core/lib/` in site-packages, the
//! wheel's layout): what `runtime install` copies instead of downloading.
//! Python is asked where they are and which MegEngine it has, without
//! importing it; the files are refused where another user could change them.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::install_record::Record;
use super::trust;
use super::version::Version;
use super::wheel::{copy_recorded, lite_library_among, runtime_libraries_in, InstallWatcher};
use crate::engine::ProcessGroup;
use crate::interrupt::interruption;

/// Where Python finds `megenginelite` and which `megengine` distribution it
/// has, read from its metadata: neither is imported (that loads the engine).
/// The first word tells Python's answer from whatever else a program prints.
const QUERY: &str = "
import json
answer = {'megengine': None, 'megenginelite': None}
try:
    import importlib.metadata as metadata
    answer['megengine'] = metadata.version('megengine')
except Exception:
    pass
import importlib.util as util
spec = util.find_spec('megenginelite')
if spec is not None and spec.submodule_search_locations:
    answer['megenginelite'] = list(spec.submodule_search_locations)[0]
print('mge-python-answer', json.dumps(answer))
";
const ANSWER_PREFIX: &str = "mge-python-answer ";

/// The longest a Python may take to answer: it starts in well under a second.
const QUERY_DEADLINE: Duration = Duration::from_secs(20);

/// The most a Python's answer may hold: a few hundred bytes.
const MAX_ANSWER: u64 = 1 << 20;

#[derive(Deserialize)]
struct Answer {
    megengine: Option<String>,
    megenginelite: Option<String>,
}

/// The MegEngine a Python has, ready to be copied.
pub struct PythonRuntime {
    /// The Python, as named.
    pub python: PathBuf,
    pub version: Version,
    /// The site-packages the runtime's files lie in.
    pub site: PathBuf,
    /// The runtime's files, named as in the wheel (relative to `site`).
    files: Vec<String>,
    lite_library: String,
}

impl PythonRuntime {
    /// The MegEngine `python` has, which must be `version`, its runtime's
    /// files beyond other users' reach. `isolated` is `python` as it is to run.
    pub fn of(python: &Path, mut isolated: Command, version: &Version) -> Result<PythonRuntime> {
        let name = python.display();
        let answer = ask(&mut isolated).with_context(|| format!("{name}"))?;
        let (Some(stated), Some(package)) = (answer.megengine, answer.megenginelite) else {
            bail!("{name} has no MegEngine installed (no megengine distribution with megenginelite)");
        };
        let found = Version::parse(&stated)
            .with_context(|| format!("{name} has MegEngine {stated:?}, not a release number"))?;
        if found != *version {
            bail!("{name} has MegEngine {found}, not the {version} asked for (--version)");
        }
        let package = PathBuf::from(package);
        let site = package
            .parent()
            .filter(|_| package.is_absolute())
            .with_context(|| {
                format!(
                    "{name} found megenginelite at {}, not a package folder in site-packages",
                    package.display()
                )
            })?
            .to_path_buf();
        let libraries = runtime_libraries_in(&site);
        for file in &libraries {
            trust::ensure_only_ours(&site, file)?;
            // A FIFO or a device would block or never end the copy.
            if !file.symlink_metadata().is_ok_and(|metadata| metadata.is_file()) {
                bail!("{} is not a regular file: not copied", file.display());
            }
        }
        let files: Vec<String> = libraries
            .iter()
            .filter_map(|file| Some(file.strip_prefix(&site).ok()?.to_str()?.to_string()))
            .collect();
        let lite_library = lite_library_among(&files)
            .map_err(|why| anyhow::anyhow!("{name}'s MegEngine in {} is not whole: {why}", site.display()))?;
        Ok(PythonRuntime {
            python: python.to_path_buf(),
            version: found,
            site,
            files,
            lite_library,
        })
    }

    /// Copies the runtime into the folder `into` in the wheel's layout,
    /// recording each file's size and SHA-256 on the way.
    pub fn copy(self, into: &Path, watcher: &mut dyn InstallWatcher) -> Result<Record> {
        let mut total = 0;
        for name in &self.files {
            total += self.site.join(name).metadata()?.len();
        }
        watcher.extracting(total);
        let mut files = Vec::new();
        for name in &self.files {
            let source = self.site.join(name);
            let from = File::open(&source).with_context(|| format!("cannot read {}", source.display()))?;
            files.push(copy_recorded(from, name, into, watcher)?);
        }
        watcher.finished();
        Ok(Record {
            version: self.version.to_string(),
            files,
            lite_library: self.lite_library,
            cuda_architectures: None,
        })
    }
}

/// Python's answer to `QUERY`, in a process group of its own that ends with
/// it, within `QUERY_DEADLINE`; what does not answer as Python does is not one.
fn ask(python: &mut Command) -> Result<Answer> {
    let group = ProcessGroup::start().context("cannot start a process group")?;
    let output = tempfile::tempfile().context("cannot create a temporary file")?;
    let child = python
        .args(["-c", QUERY])
        .process_group(group.id())
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(Stdio::null())
        .spawn();
    let mut child = child.map_err(|err| anyhow::anyhow!("cannot run it as Python: {err}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(interrupted) = interruption() {
            drop(group);
            let _ = child.wait();
            return Err(interrupted.into());
        }
        if let Some(status) = child.try_wait().context("cannot wait for it")? {
            break status;
        }
        let too_long = output.metadata().is_ok_and(|written| written.len() > MAX_ANSWER);
        if too_long || started.elapsed() > QUERY_DEADLINE {
            drop(group);
            let _ = child.wait();
            match too_long {
                true => bail!("is not Python: it printed more than {MAX_ANSWER} bytes"),
                false => bail!("is not Python: it did not answer within {} s", QUERY_DEADLINE.as_secs()),
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(group);
    let mut text = String::new();
    let mut output = output;
    output.seek(SeekFrom::Start(0)).context("cannot read its answer")?;
    output.take(MAX_ANSWER).read_to_string(&mut text).ok();
    let answer = text
        .lines()
        .find_map(|line| line.strip_prefix(ANSWER_PREFIX))
        .filter(|_| status.success())
        .and_then(|json| serde_json::from_str(json).ok());
    answer.with_context(|| format!("is not Python: it did not answer as Python 3.8 or newer does ({status})"))
}
