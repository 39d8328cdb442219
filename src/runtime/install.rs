//! `mge runtime install`: MegEngine's wheel through pip, only its runtime
//! libraries kept, moved into place in one rename so a broken install never
//! looks like a finished one.

use std::fs::{self, File, TryLockError};
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::record::{Damage, FileRecord, Hashing, Record, Scrutiny};
use super::{files_in, home, install_dir, python, release_number, trust, Files, LITE_LIB_IN_WHEEL};
use crate::engine::{Lite, ProcessGroup};
use crate::supervise::parent::{catch_interruptions, interruption};
use crate::text::to_stderr;

/// What the Lite library needs at run time, as laid out in the wheel.
pub(super) const RUNTIME_FILES: &[&str] = &[
    LITE_LIB_IN_WHEEL,
    "megengine/core/lib/libmegengine_shared.so",
    "megengine/core/lib/libatomic.so.1",
    "megengine/core/lib/libnvrtc.so.10.1",
    "megengine/core/lib/libnvToolsExt.so.1",
];

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

/// Installs `version` unless it is present and intact (or `force`); repairs a
/// damaged one; returns the library's path.
pub fn install(version: &str, force: bool, quiet: bool, watcher: &mut dyn InstallWatcher) -> Result<PathBuf> {
    // The version names a folder: nothing but a release number may reach the path.
    if release_number(version).is_none() {
        bail!(
            "--version {version}: expected a release number such as {}",
            super::DEFAULT_VERSION
        );
    }
    let home = home()?;
    let target = install_dir(&home, version);
    let library = target.join(LITE_LIB_IN_WHEEL);
    let runtime_root = target.parent().expect("install_dir has a parent");
    // An intact install needs no lock, so a read-only cache folder holding one is fine.
    let already = || {
        if !quiet {
            to_stderr(&format!(
                "MegEngine {version} is already installed in {} (--force reinstalls)",
                target.display()
            ));
        }
    };
    if !force {
        if let Some(Files::Verified) = installed(&home, &target)? {
            already();
            if let Some(_lock) = try_lock(&home) {
                remove_abandoned_staging(runtime_root);
            }
            return Ok(library);
        }
    }
    fs::create_dir_all(runtime_root).with_context(|| format!("cannot create {}", runtime_root.display()))?;
    // Nothing is installed where another user could change it, or follow a link out.
    trust::ensure_path_only_ours(&home, runtime_root)?;
    // Held until the install is done: a second install waits, then finds the
    // first one's result, instead of taking its staging folder for abandoned.
    let _lock = lock(&home, quiet)?;
    remove_abandoned_staging(runtime_root);
    match installed(&home, &target)? {
        Some(Files::Verified) if !force => {
            already();
            return Ok(library);
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
    catch_interruptions();
    // Staged beside the target, so the final step is a rename on one filesystem;
    // dropping the folder on any error or interruption removes every partial file.
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(runtime_root)
        .with_context(|| format!("cannot create a staging folder in {}", runtime_root.display()))?;
    let wheel = download_wheel(version, &home, staging.path(), quiet)?;
    let extracted = staging.path().join("runtime");
    let record = extract(&wheel, &extracted, version, watcher)?;
    fs::remove_file(&wheel).ok();
    check_version(&extracted.join(LITE_LIB_IN_WHEEL), version)?;
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
    Ok(library)
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
fn download_wheel(version: &str, home: &Path, dir: &Path, quiet: bool) -> Result<PathBuf> {
    if !quiet {
        to_stderr(&format!(
            "downloading MegEngine {version} (about 940 MB) with pip into {}",
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

/// Extracts the runtime files, recording each one's size and SHA-256 on the way.
fn extract(wheel: &Path, into: &Path, version: &str, watcher: &mut dyn InstallWatcher) -> Result<Record> {
    let file = File::open(wheel).with_context(|| format!("cannot open {}", wheel.display()))?;
    let mut archive = zip::ZipArchive::new(file).with_context(|| format!("{} is not a wheel", wheel.display()))?;
    let mut total = 0;
    for name in RUNTIME_FILES {
        total += archive
            .by_name(name)
            .with_context(|| format!("the wheel has no {name}"))?
            .size();
    }
    watcher.extracting(total);
    let mut files = Vec::new();
    for name in RUNTIME_FILES {
        let entry = archive.by_name(name)?;
        let path = into.join(name);
        fs::create_dir_all(path.parent().expect("wheel paths have a folder"))?;
        let mut out = File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        let mut hashing = Hashing::new(Watched {
            inner: entry,
            watcher: &mut *watcher,
        });
        let copied = io::copy(&mut hashing, &mut out);
        if let Some(interrupted) = interruption() {
            return Err(interrupted.into());
        }
        copied.with_context(|| format!("cannot extract {name}"))?;
        let digested = hashing.finish();
        files.push(FileRecord {
            path: name.to_string(),
            size: digested.size,
            sha256: digested.sha256,
        });
    }
    watcher.finished();
    Ok(Record {
        version: version.to_string(),
        files,
    })
}

/// A reader that tells the watcher how much it read, and stops when the user interrupts.
struct Watched<'a, R> {
    inner: R,
    watcher: &'a mut dyn InstallWatcher,
}

impl<R: Read> Read for Watched<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if interruption().is_some() {
            return Err(io::Error::other("interrupted"));
        }
        let read = self.inner.read(buf)?;
        self.watcher.extracted(read as u64);
        Ok(read)
    }
}

/// Loads the freshly extracted library before it replaces anything.
fn check_version(library: &Path, version: &str) -> Result<()> {
    let lite = Lite::load(library, false).context("the extracted runtime does not load")?;
    let (major, minor, patch) = lite.version()?;
    let found = format!("{major}.{minor}.{patch}");
    if found != version {
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
