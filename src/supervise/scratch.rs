//! A temporary folder of mge's (a child's TMPDIR, tune's candidates' and
//! compare's two runs' outputs): `mge-XXXXXX` in the system's, removed with its owner. A folder whose owner ended without removing
//! it (killed, or ended by a signal it does not catch) is removed by the next
//! `mge` that starts a child: each owner holds a lock on a file inside its
//! folder for as long as it lives, and the kernel lets go of it when the
//! owner is gone.

use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::Once;

use anyhow::{Context, Result};

use crate::interrupt::catch_interruptions;
use crate::output_files::{hold_as_owner, remove_abandoned};

const PREFIX: &str = "mge-";

pub struct Scratch {
    /// Removed before the lock is let go (see `drop`).
    dir: tempfile::TempDir,
    /// None where the file system takes no lock: the folder is then never
    /// taken for abandoned (it is removed with its supervisor all the same).
    owner: Option<File>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.dir.disable_cleanup(true);
        let dir = self.dir.path();
        // Listing a folder takes a descriptor, `remove_dir_all` one a level:
        // where they run out (`ulimit -n` reached) the lock's goes, and the
        // folder is removed holding one at a time.
        if fs::remove_dir_all(dir).is_err() {
            self.owner = None;
            let _ = remove_one_open_at_a_time(dir);
        }
    }
}

impl Scratch {
    /// A new folder in the system's temporary folder, having removed those of owners now gone.
    /// From here on the user's interruptions are caught, so that the folder is removed with
    /// its owner: a SIGHUP between tune's folder and its first child left the folder behind.
    pub fn new() -> Result<Scratch> {
        catch_interruptions();
        let dir = tempfile::Builder::new()
            .prefix(PREFIX)
            .tempdir()
            .context("cannot create a temporary folder for the engine's process")?;
        let owner = hold_as_owner(dir.path()).ok();
        static ABANDONED_REMOVED: Once = Once::new();
        ABANDONED_REMOVED.call_once(|| remove_abandoned(dir.path(), PREFIX));
        Ok(Scratch { dir, owner })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The random part of the folder's name, unlike any other live folder's.
    pub fn token(&self) -> &str {
        let name = self.dir.path().file_name().and_then(|name| name.to_str());
        name.and_then(|name| name.strip_prefix(PREFIX))
            .expect("tempfile names the folder PREFIX and ASCII letters and digits")
    }
}

/// Removes `dir` and what it holds, with no more than one folder open at a
/// time (an empty folder takes none).
fn remove_one_open_at_a_time(dir: &Path) -> io::Result<()> {
    let entries: Vec<_> = fs::read_dir(dir).map_or(Ok(Vec::new()), Iterator::collect)?;
    for entry in entries {
        match entry.file_type()?.is_dir() {
            true => remove_one_open_at_a_time(&entry.path())?,
            false => fs::remove_file(entry.path())?,
        }
    }
    fs::remove_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_folders_whose_owner_is_gone_are_removed() {
        let temp = tempfile::tempdir().unwrap();
        let folder = |name: &str| {
            let path = temp.path().join(name);
            fs::create_dir(&path).unwrap();
            path
        };
        let ours = folder("mge-ours");
        let alive = folder("mge-alive");
        let _held = hold_as_owner(&alive).unwrap();
        let gone = folder("mge-gone");
        drop(hold_as_owner(&gone).unwrap());
        fs::write(gone.join("left"), b"").unwrap();
        let unmarked = folder("mge-old");
        let other = folder("other");
        drop(hold_as_owner(&other).unwrap());
        remove_abandoned(&ours, PREFIX);
        assert!(!gone.exists());
        for kept in [&ours, &alive, &unmarked, &other] {
            assert!(kept.exists(), "{}", kept.display());
        }
    }
}
