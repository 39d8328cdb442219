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
use super::installed::{lite_library_in, place_of};
use super::record::{Damage, Scrutiny};
use super::version::Version;
use super::wheel::Wheel;
use super::{files_in, home, python, trust, Files};
use crate::engine::ProcessGroup;
use crate::interrupt::{catch_interruptions, interruption};
use crate::text::to_stderr;

const STAGING_PREFIX: &str = ".install-";

/// Told how the extraction from the wheel goes: the presentation of an install.
pub trait InstallWatcher {
    /// `total` bytes are to be extracted.
    fn extracting(&mut self, total: u64);
    /// `bytes` more were extracted.
    fn extracted(&mut self, bytes: u64);
    /// Every file is out.
    fn finished(&mut self);
}

/// Where the wheel comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// pip's package index (the registry serves 1.13.0, the CUDA 10.1 build).
    Registry,
    /// pip's index and this page or folder of wheels (`--find-links`), such as MegEngine's own.
    FindLinks(String),
    /// A wheel the user has.
    Wheel(PathBuf),
}

/// Loads the Lite library at a path and says the version it reports.
pub type VersionOf<'a> = dyn Fn(&Path) -> Result<(i32, i32, i32)> + 'a;

/// Installs `version` (for a wheel file, its own, which `version` must match)
/// unless it is present and intact (or `force`); repairs a damaged one;
/// returns the library's path. Runtimes of other versions stay beside it.
/// `version_of` loads a library and says the version it reports (in a
/// supervised child: the engine may crash as it loads).
pub fn install(
    version: Option<&str>,
    source: &Source,
    force: bool,
    quiet: bool,
    watcher: &mut dyn InstallWatcher,
    version_of: &VersionOf<'_>,
) -> Result<PathBuf> {
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
    let home = home()?;
    let given = match source {
        Source::Wheel(path) => Some(given_wheel(&home, path, asked.as_ref())?),
        _ => None,
    };
    let version = match (&given, asked) {
        (Some(wheel), _) => wheel.version.clone(),
        (None, Some(asked)) => asked,
        (None, None) => Version::parse(super::DEFAULT_VERSION).expect("a version"),
    };
    // An installed release is looked for before any download, however it is spelled.
    let (version, target) = place_of(&home, &version);
    let runtime_root = target.parent().expect("install_dir has a parent").to_path_buf();
    // An intact install needs no lock, so a read-only cache folder holding one is fine.
    if !force {
        if let Some(Files::Verified) = installed(&home, &target)? {
            already(&version, &target, quiet);
            if let Some(_lock) = try_lock(&home) {
                remove_abandoned_staging(&runtime_root);
            }
            return Ok(lite_library_in(&target));
        }
    }
    fs::create_dir_all(&runtime_root).with_context(|| format!("cannot create {}", runtime_root.display()))?;
    // Nothing is installed where another user could change it, or follow a link out.
    trust::ensure_path_only_ours(&home, &runtime_root)?;
    // Held until the install is done: a second install waits, then finds the
    // first one's result, instead of taking its staging folder for abandoned.
    let _lock = lock(&home, quiet)?;
    remove_abandoned_staging(&runtime_root);
    if let Some(library) = examine(&home, &version, &target, force, quiet)? {
        return Ok(library);
    }
    catch_interruptions();
    // Staged beside the target, so the final step is a rename on one filesystem;
    // dropping the folder on any error or interruption removes every partial file.
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(&runtime_root)
        .with_context(|| format!("cannot create a staging folder in {}", runtime_root.display()))?;
    let (wheel, downloaded) = match given {
        Some(wheel) => (wheel, None),
        None => {
            let downloaded = download_wheel(&version, source, &home, staging.path(), quiet)?;
            (Wheel::open(&downloaded)?, Some(downloaded))
        }
    };
    // pip may answer `1.13.2` with a build of it (`1.13.2+cu118`): the wheel names the folder.
    if wheel.version != version {
        let (version, target) = place_of(&home, &wheel.version);
        if let Some(library) = examine(&home, &version, &target, force, quiet)? {
            return Ok(library);
        }
    }
    let (version, target) = place_of(&home, &wheel.version);
    let extracted = staging.path().join("runtime");
    let mut record = wheel.extract(&extracted, watcher)?;
    if let Some(downloaded) = downloaded {
        fs::remove_file(downloaded).ok();
    }
    let library = extracted.join(&record.lite_library);
    check_version(&library, &version, version_of)?;
    // Read once here, so that no later command reads the engine for it.
    record.cuda_architectures = Some(cuda::scan(&library)?);
    record.write(&extracted)?;

    if target.exists() {
        // Keep the old install until the new one is in place.
        fs::rename(&target, staging.path().join("previous"))
            .with_context(|| format!("cannot move the old install {} aside", target.display()))?;
    }
    fs::rename(&extracted, &target).with_context(|| format!("cannot move the runtime into {}", target.display()))?;
    if !quiet {
        to_stderr(&format!(
            "installed MegEngine {version} runtime in {}",
            target.display()
        ));
    }
    Ok(target.join(&record.lite_library))
}

/// The install of `version` in `target`, if it is there intact and not to
/// be replaced (`force`); says what is wrong with one to be repaired.
fn examine(home: &Path, version: &Version, target: &Path, force: bool, quiet: bool) -> Result<Option<PathBuf>> {
    match installed(home, target)? {
        Some(Files::Verified) if !force => {
            already(version, target, quiet);
            return Ok(Some(lite_library_in(target)));
        }
        Some(Files::Damaged(damage)) if !quiet => to_stderr(&format!(
            "repairing MegEngine {version} in {}: {}",
            target.display(),
            list(&damage)
        )),
        Some(Files::Unrecorded) if !quiet => to_stderr(&format!(
            "MegEngine {version} in {} has no record of its files (installed by an older mge): reinstalling",
            target.display()
        )),
        _ => {}
    }
    Ok(None)
}

fn already(version: &Version, target: &Path, quiet: bool) {
    if !quiet {
        to_stderr(&format!(
            "MegEngine {version} is already installed in {} (--force reinstalls)",
            target.display()
        ));
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
fn installed(home: &Path, target: &Path) -> Result<Option<Files>> {
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
fn lock(home: &Path, quiet: bool) -> Result<File> {
    let path = home.join("install.lock");
    let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(err)) => return Err(err).with_context(|| format!("cannot lock {}", path.display())),
    }
    if !quiet {
        to_stderr(&format!(
            "waiting for another `mge runtime install` into {} to finish",
            home.display()
        ));
    }
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
fn download_wheel(version: &Version, source: &Source, home: &Path, dir: &Path, quiet: bool) -> Result<PathBuf> {
    let find_links = match source {
        Source::FindLinks(links) => Some(links),
        _ => None,
    };
    if !quiet {
        let (size, from) = match find_links {
            Some(links) => (String::new(), format!(", looking in {links} too,")),
            None => (" (about 940 MB)".to_string(), String::new()),
        };
        to_stderr(&format!(
            "downloading MegEngine {version}{size} with pip{from} into {}",
            home.display()
        ));
    }
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
        .args(if quiet { &["--quiet"][..] } else { &[][..] })
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
        let first = lock(home.path(), true).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let path = home.path().to_path_buf();
        let second = std::thread::spawn(move || {
            let lock = lock(&path, true);
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
