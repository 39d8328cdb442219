//! `mge runtime install`: MegEngine's wheel through pip, only its runtime
//! libraries kept, moved into place in one rename so a broken install never
//! looks like a finished one.

use std::fs::{self, File, TryLockError};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::cuda;
use super::install_record::{Damage, Record, Scrutiny};
use super::installed::{install_dir, installed, lite_library_in};
use super::python_runtime::PythonRuntime;
use super::version::Version;
use super::wheel::{InstallWatcher, Wheel};
use super::{files_in, home, python, trust, Files};
use crate::engine::ProcessGroup;
use crate::interrupt::{catch_interruptions, interruption};
use crate::messages::Voice;

const STAGING_PREFIX: &str = ".install-";

/// Where the runtime comes from.
#[derive(Clone, Debug)]
pub enum RuntimeSource {
    /// pip's package index (the registry serves 1.13.0, the CUDA 10.1 build).
    Registry,
    /// pip's index and this page or folder of wheels (`--find-links`), such as MegEngine's own.
    FindLinks(String),
    /// A wheel the user has.
    Wheel(PathBuf),
    /// The MegEngine this Python has installed (`--from-python`): copied, nothing downloaded.
    Python(PathBuf),
}

/// Loads the Lite library at a path and says the version it reports.
pub type VersionOf<'a> = dyn Fn(&Path) -> Result<(i32, i32, i32)> + 'a;

/// Where a version is installed in the cache folder: the install of that
/// release however its folder spells it (`1.13` is `1.13.0`), with its version
/// as the folder spells it; else the folder it gets.
struct Place {
    version: Version,
    target: PathBuf,
}

impl Place {
    fn of(home: &Path, version: &Version) -> Place {
        match installed(home)
            .into_iter()
            .rev()
            .find(|install| install.version == *version)
        {
            Some(install) => Place {
                version: install.version,
                target: install.dir,
            },
            None => Place {
                version: version.clone(),
                target: install_dir(home, version),
            },
        }
    }

    /// The cache's folder of runtimes: this one's, and the staging folders beside it.
    fn runtime_root(&self) -> &Path {
        self.target.parent().expect("an install's folder has a parent")
    }
}

/// Installs `version` (for a wheel file, its own, which `version` must match)
/// unless it is present and intact (or `force`); repairs a damaged one;
/// returns the library's path. Runtimes of other versions stay beside it.
/// `version_of` loads a library and says the version it reports (in a
/// supervised child: the engine may crash as it loads).
pub fn install(
    version: Option<&str>,
    source: &RuntimeSource,
    force: bool,
    quiet: bool,
    watcher: &mut dyn InstallWatcher,
    version_of: &VersionOf<'_>,
) -> Result<PathBuf> {
    let voice = Voice::new(quiet);
    let home = home()?;
    let (version, given) = wanted(&home, version, source)?;
    // An installed release is looked for before any download, however it is spelled.
    let place = Place::of(&home, &version);
    // An intact install needs no lock, so a read-only cache folder holding one is fine.
    if !force {
        if let Some(library) = already_intact(&home, &place, voice)? {
            return Ok(library);
        }
    }
    let _lock = lock_runtime_root(&home, place.runtime_root(), voice)?;
    if let Some(library) = examine(&home, &place, force, voice)? {
        return Ok(library);
    }
    catch_interruptions();
    // Staged beside the target, so the final step is a rename on one filesystem;
    // dropping the folder on any error or interruption removes every partial file.
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(place.runtime_root())
        .with_context(|| format!("cannot create a staging folder in {}", place.runtime_root().display()))?;
    let obtained = match given {
        Some(given) => given,
        None => obtain(&place.version, source, &home, staging.path(), voice)?,
    };
    if let Obtained::Python(runtime) = &obtained {
        voice.say(format!(
            "copying MegEngine {} from {} (its site-packages {}), no download",
            runtime.version,
            runtime.python.display(),
            runtime.site.display()
        ));
    }
    // pip may answer `1.13.2` with a build of it (`1.13.2+cu118`): the wheel names the folder.
    let wheels_place = Place::of(&home, obtained.version());
    if *obtained.version() != place.version {
        if let Some(library) = examine(&home, &wheels_place, force, voice)? {
            return Ok(library);
        }
    }
    let extracted = Extracted::from(obtained, &wheels_place, staging.path(), watcher, version_of)?;
    extracted.put_in(&wheels_place, staging.path(), voice)
}

/// The version to install, decided once: a wheel file's own (which the
/// version asked for must match), else the one asked for, else the
/// registry's; and the runtime the user gave: the wheel file, opened, or
/// the Python's MegEngine, which must be that version.
fn wanted(home: &Path, version: Option<&str>, source: &RuntimeSource) -> Result<(Version, Option<Obtained>)> {
    // The version names a folder: nothing but a version number may reach the path.
    let asked = version
        .map(|text| {
            Version::parse(text).with_context(|| {
                format!(
                    "--version {text}: expected a release number such as {} or a build such as 1.13.2+cu118",
                    super::DEFAULT_VERSION
                )
            })
        })
        .transpose()?;
    if let RuntimeSource::Wheel(path) = source {
        let wheel = given_wheel(home, path, asked.as_ref())?;
        let version = wheel.version.clone();
        let downloaded = None;
        return Ok((version, Some(Obtained::Wheel { wheel, downloaded })));
    }
    let version = asked.unwrap_or_else(|| Version::parse(super::DEFAULT_VERSION).expect("a version"));
    let given = match source {
        RuntimeSource::Python(python) => Some(Obtained::Python(PythonRuntime::of(
            python,
            python::isolated(python),
            &version,
        )?)),
        _ => None,
    };
    Ok((version, given))
}

/// The library of the install at `place` where it is intact, said to be
/// there; what killed installs left beside it is removed on the way, where
/// the install lock is free.
fn already_intact(home: &Path, place: &Place, voice: Voice) -> Result<Option<PathBuf>> {
    if !matches!(installed_files(home, &place.target)?, Some(Files::Verified)) {
        return Ok(None);
    }
    already(place, voice);
    if let Some(_lock) = try_lock(home) {
        remove_abandoned_staging(place.runtime_root());
    }
    Ok(Some(lite_library_in(&place.target)))
}

/// Makes the cache's folder of runtimes, beyond other users' reach, takes
/// the install lock, and removes what killed installs left there.
fn lock_runtime_root(home: &Path, runtime_root: &Path, voice: Voice) -> Result<File> {
    fs::create_dir_all(runtime_root).with_context(|| format!("cannot create {}", runtime_root.display()))?;
    // Nothing is installed where another user could change it, or follow a link out.
    trust::ensure_path_only_ours(home, runtime_root)?;
    // Held until the install is done: a second install waits, then finds the
    // first one's result, instead of taking its staging folder for abandoned.
    let lock = lock(home, voice)?;
    remove_abandoned_staging(runtime_root);
    Ok(lock)
}

/// The install at `place`, if it is there intact and not to be replaced
/// (`force`); says what is wrong with one to be repaired.
fn examine(home: &Path, place: &Place, force: bool, voice: Voice) -> Result<Option<PathBuf>> {
    let (version, target) = (&place.version, place.target.display());
    match installed_files(home, &place.target)? {
        Some(Files::Verified) if !force => {
            already(place, voice);
            return Ok(Some(lite_library_in(&place.target)));
        }
        Some(Files::Damaged(damage)) => {
            voice.say(format!("repairing MegEngine {version} in {target}: {}", list(&damage)))
        }
        Some(Files::Unrecorded) => voice.say(format!(
            "MegEngine {version} in {target} has no record of its files (installed by an older mge): reinstalling"
        )),
        _ => {}
    }
    Ok(None)
}

fn already(place: &Place, voice: Voice) {
    voice.say(format!(
        "MegEngine {} is already installed in {} (--force reinstalls)",
        place.version,
        place.target.display()
    ));
}

/// The runtime to install: a wheel (the user's file, or the one pip
/// downloaded into the staging folder), or a Python's MegEngine.
enum Obtained {
    Wheel { wheel: Wheel, downloaded: Option<PathBuf> },
    Python(PythonRuntime),
}

impl Obtained {
    fn version(&self) -> &Version {
        match self {
            Obtained::Wheel { wheel, .. } => &wheel.version,
            Obtained::Python(runtime) => &runtime.version,
        }
    }

    /// Extracts (copies) the runtime into `folder`, recording its files; a
    /// downloaded wheel is removed once out: a gigabyte.
    fn extract(self, folder: &Path, watcher: &mut dyn InstallWatcher) -> Result<Record> {
        match self {
            Obtained::Wheel { wheel, downloaded } => {
                let record = wheel.extract(folder, watcher)?;
                if let Some(downloaded) = downloaded {
                    fs::remove_file(downloaded).ok();
                }
                Ok(record)
            }
            Obtained::Python(runtime) => runtime.copy(folder, watcher),
        }
    }
}

/// The runtime of `version` from pip: for the registry, first the active
/// virtualenv's or the trusted `python3`'s MegEngine where one has that
/// version; else a download.
fn obtain(version: &Version, source: &RuntimeSource, home: &Path, dir: &Path, voice: Voice) -> Result<Obtained> {
    if let RuntimeSource::Registry = source {
        if let Some(runtime) = installed_in_python(version, voice) {
            return Ok(Obtained::Python(runtime));
        }
    }
    let downloaded = download_wheel(version, source, home, dir, voice)?;
    Ok(Obtained::Wheel {
        wheel: Wheel::open(&downloaded)?,
        downloaded: Some(downloaded),
    })
}

/// The MegEngine `version` of the active virtualenv's `python`, else of the
/// trusted `python3`, where one has it beyond other users' reach; why each
/// other was passed over is said.
fn installed_in_python(version: &Version, voice: Voice) -> Option<PythonRuntime> {
    let mut candidates: Vec<PathBuf> = [python::virtualenv_python(), python::trusted_python3()]
        .into_iter()
        .flatten()
        .collect();
    // An active virtualenv's python is often PATH's python3 too: asked once.
    candidates.dedup_by_key(|candidate| candidate.canonicalize().unwrap_or_else(|_| candidate.clone()));
    for candidate in candidates {
        match PythonRuntime::of(&candidate, python::isolated(&candidate), version) {
            Ok(runtime) => return Some(runtime),
            Err(passed_over) => voice.say(format!("not copied from Python: {passed_over:#}")),
        }
    }
    None
}

/// A runtime extracted from its wheel into the staging folder, loaded and
/// found to be the wheel's release, its files recorded.
struct Extracted {
    folder: PathBuf,
    lite_library: String,
}

impl Extracted {
    /// Extracts the runtime into `staging` and checks that it loads and
    /// reports the release of `place` before it replaces anything.
    fn from(
        obtained: Obtained,
        place: &Place,
        staging: &Path,
        watcher: &mut dyn InstallWatcher,
        version_of: &VersionOf,
    ) -> Result<Extracted> {
        let folder = staging.join("runtime");
        let mut record = obtained.extract(&folder, watcher)?;
        let library = folder.join(&record.lite_library);
        check_version(&library, &place.version, version_of)?;
        // Read once here, so that no later command reads the engine for it.
        record.cuda_architectures = Some(cuda::scan(&library)?);
        record.write(&folder)?;
        Ok(Extracted {
            folder,
            lite_library: record.lite_library,
        })
    }

    /// Moves the runtime into `place` in one rename: an install there is moved
    /// aside into `staging` first, and goes with it.
    fn put_in(self, place: &Place, staging: &Path, voice: Voice) -> Result<PathBuf> {
        let target = &place.target;
        if target.exists() {
            // Keep the old install until the new one is in place.
            fs::rename(target, staging.join("previous"))
                .with_context(|| format!("cannot move the old install {} aside", target.display()))?;
        }
        fs::rename(&self.folder, target)
            .with_context(|| format!("cannot move the runtime into {}", target.display()))?;
        voice.say(format!(
            "installed MegEngine {} runtime in {}",
            place.version,
            target.display()
        ));
        Ok(target.join(&self.lite_library))
    }
}

/// The wheel `path`, whose version must be `asked` where one is, and which
/// may not lie in the cache's runtime folder (an install there is replaced).
fn given_wheel(home: &Path, path: &Path, asked: Option<&Version>) -> Result<Wheel> {
    if let (Ok(wheel), Ok(root)) = (path.canonicalize(), home.join("runtime").canonicalize()) {
        if wheel.starts_with(&root) {
            bail!(
                "--wheel {}: the wheel is inside the cache folder {}, whose installs are replaced: keep it elsewhere",
                path.display(),
                root.display()
            );
        }
    }
    let wheel = Wheel::open(path).with_context(|| format!("--wheel {}", path.display()))?;
    if let Some(asked) = asked.filter(|asked| **asked != wheel.version) {
        bail!(
            "--wheel {} holds MegEngine {}, not the --version {asked} asked for",
            path.display(),
            wheel.version
        );
    }
    Ok(wheel)
}

/// The install folder's files checked to the byte, or `None` when there is none.
/// One that another user could change (or a link) is refused, not repaired: what
/// else it may be used for is not known.
fn installed_files(home: &Path, target: &Path) -> Result<Option<Files>> {
    if fs::symlink_metadata(target).is_err() {
        return Ok(None);
    }
    trust::ensure_only_ours(home, target)?;
    files_in(target, Scrutiny::Contents).map(Some)
}

/// `a; b; c`: damage in one line.
pub fn list(damage: &[Damage]) -> String {
    damage.iter().map(Damage::to_string).collect::<Vec<_>>().join("; ")
}

/// The install lock if it can be had at once (and the cache folder is writable).
fn try_lock(home: &Path) -> Option<File> {
    let file = File::create(home.join("install.lock")).ok()?;
    file.try_lock().ok().map(|()| file)
}

/// Takes the cache's install lock, waiting (with a message) while another
/// install holds it. The lock goes with the returned file; the file stays
/// (removing it would let a third install lock a new file while the second
/// holds the old one). It lives in the cache folder, beside `runtime/`.
fn lock(home: &Path, voice: Voice) -> Result<File> {
    let path = home.join("install.lock");
    let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(err)) => return Err(err).with_context(|| format!("cannot lock {}", path.display())),
    }
    voice.say(format!(
        "waiting for another `mge runtime install` into {} to finish",
        home.display()
    ));
    file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(file)
}

/// An install killed before it could clean up (Ctrl-C) leaves its staging
/// folder behind: never a usable runtime, but a gigabyte of disk.
fn remove_abandoned_staging(runtime_root: &Path) {
    let Ok(entries) = fs::read_dir(runtime_root) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(STAGING_PREFIX) {
            fs::remove_dir_all(entry.path()).ok();
        }
    }
}

/// `python3 -m pip download` of the wheel into `dir`. pip runs in a process group
/// that ends whole when the download does, is interrupted, or when `mge` is killed:
/// a `python3` that is a wrapper script (pyenv's shims) leaves no pip behind.
fn download_wheel(version: &Version, source: &RuntimeSource, home: &Path, dir: &Path, voice: Voice) -> Result<PathBuf> {
    let find_links = match source {
        RuntimeSource::FindLinks(links) => Some(links),
        _ => None,
    };
    let (size, from) = match find_links {
        Some(links) => (String::new(), format!(", looking in {links} too,")),
        None => (" (about 940 MB)".to_string(), String::new()),
    };
    voice.say(format!(
        "downloading MegEngine {version}{size} with pip{from} into {}",
        home.display()
    ));
    // pip's temporary files go inside the staging folder, removed with it.
    let pip_tmp = dir.join("tmp");
    fs::create_dir(&pip_tmp).with_context(|| format!("cannot create {}", pip_tmp.display()))?;
    let no_python = || anyhow::anyhow!(NO_PYTHON);
    let mut python = python::python3().ok_or_else(no_python)?;
    let group = ProcessGroup::start().context("cannot start pip's process group")?;
    // The wheel exists only for CPython 3.8-3.10, but its libraries do not depend on
    // Python: ask pip for the 3.10 build whatever python3 this is. Binaries only: no
    // package's own code runs to build one.
    let pip = python
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--python-version", "3.10", "--platform", "manylinux2014_x86_64"])
        .args(if voice.is_quiet() { &["--quiet"][..] } else { &[][..] })
        .args(
            find_links
                .map(|links| ["--find-links", links.as_str()])
                .into_iter()
                .flatten(),
        )
        .arg("-d")
        .arg(dir)
        .arg(format!("megengine=={version}"))
        .env("TMPDIR", &pip_tmp)
        .process_group(group.id())
        // Out of the terminal's foreground group, a read from it (a password
        // prompt) would stop pip for good: pip asks nothing, and reads nothing.
        .arg("--no-input")
        .stdin(Stdio::null())
        // pip's own progress bar is the download's progress; stdout is ours.
        .stdout(Stdio::from(io::stderr()))
        .spawn();
    let mut pip = match pip {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(no_python()),
        Err(err) => bail!("cannot run python3 -m pip: {err}"),
        Ok(pip) => pip,
    };
    let status = loop {
        if let Some(interrupted) = interruption() {
            drop(group);
            let _ = pip.wait();
            return Err(interrupted.into());
        }
        match pip.try_wait().context("cannot wait for pip")? {
            Some(status) => break status,
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    // Whatever pip left running in its group goes with it.
    drop(group);
    if let Some(interrupted) = interruption() {
        return Err(interrupted.into());
    }
    if !status.success() {
        bail!("pip could not download megengine=={version} ({status}); is that a released version?");
    }
    fs::read_dir(dir)?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .with_context(|| format!("pip reported success but left no wheel in {}", dir.display()))
}

const NO_PYTHON: &str = "`mge runtime install` needs python3 with pip on PATH to download MegEngine's wheel \
                         (folders of PATH that are relative or writable by every user are not searched)";

/// Loads the freshly extracted library before it replaces anything: it must
/// report the wheel's release (a local tag is the build's, unseen by the library).
fn check_version(library: &Path, version: &Version, version_of: &VersionOf) -> Result<()> {
    let (major, minor, patch) = version_of(library).context("the extracted runtime does not load")?;
    let found = format!("{major}.{minor}.{patch}");
    let (major, minor, patch) = version.release_triple();
    if found != format!("{major}.{minor}.{patch}") {
        bail!("the wheel for {version} holds a Lite library reporting version {found}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second install waits for the first one's lock.
    #[test]
    fn a_second_install_waits_for_the_first() {
        let home = tempfile::tempdir().unwrap();
        let first = lock(home.path(), Voice::new(true)).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let path = home.path().to_path_buf();
        let second = std::thread::spawn(move || {
            let lock = lock(&path, Voice::new(true));
            done.send(()).unwrap();
            lock.map(drop)
        });
        assert!(
            finished.recv_timeout(std::time::Duration::from_millis(300)).is_err(),
            "did not wait"
        );
        drop(first);
        finished.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        second.join().unwrap().unwrap();
    }
}
