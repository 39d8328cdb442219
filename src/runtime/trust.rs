//! Whether a runtime found by looking (the cache folder, Python's `megenginelite`)
//! is one that no one but this user or root can change: loading a library runs
//! its code, so a folder another local user can write into (a shared temporary
//! folder, a link into one) is never where it comes from. A library the user
//! names (`--lite-lib`) is taken as it is. The same holds for the folders of
//! the search paths that programs (`PATH`) and libraries (`LD_LIBRARY_PATH`)
//! are looked up in by name.

use std::env;
use std::ffi::{OsStr, OsString};
use std::fs::Metadata;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::engine;

/// The folders of a search path (`PATH`, `LD_LIBRARY_PATH`) that a program or
/// a library may come from: absolute (an empty entry, `.` or any relative one
/// means the current folder, or one below it), existing, and not writable by
/// every user (`/tmp`, where anyone can leave a `python3` or a `libstdc++.so.6`).
pub fn trusted_folders(list: &OsStr) -> Vec<PathBuf> {
    env::split_paths(list)
        .filter(|folder| folder.is_absolute() && folder.metadata().is_ok_and(|m| m.is_dir() && !writable_by_all(&m)))
        .collect()
}

pub fn writable_by_all(metadata: &Metadata) -> bool {
    metadata.permissions().mode() & 0o002 != 0
}

/// The variable the dynamic loader looks libraries up in first, by name.
const LIBRARY_PATH: &str = "LD_LIBRARY_PATH";

/// The dynamic loader looks up the libraries the engine needs
/// (`libstdc++.so.6`) and those it opens (`libcuda.so.1`) in
/// `LD_LIBRARY_PATH` first, as it read the variable when the process started.
/// Where it names a folder no library may come from (see `trusted_folders`;
/// `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/lib` with the variable unset names
/// the current folder), the tool starts again without it, so that neither the
/// engine it loads nor any process it starts (the engine's, `python3`) looks
/// there. Returns only where it need not or cannot.
pub fn ensure_trusted_library_path() -> Result<()> {
    let list = env::var_os(LIBRARY_PATH).unwrap_or_default();
    // An empty value names no folder.
    if list.is_empty() {
        return Ok(());
    }
    let trusted = trusted_folders(&list);
    if env::split_paths(&list).eq(trusted.iter().cloned()) {
        return Ok(());
    }
    let value: Option<OsString> = match trusted.is_empty() {
        true => None,
        false => Some(env::join_paths(&trusted).context("LD_LIBRARY_PATH")?),
    };
    Err(engine::restart(LIBRARY_PATH, value)).context(
        "LD_LIBRARY_PATH names the current folder or one every user can write into, \
         and mge cannot start again without it",
    )
}

/// Refuses `below` unless it, every folder between it and `root`, `root` itself
/// and, where `below` is a folder, everything inside it, is beyond other users'
/// reach (see `judged`).
/// `root` may be a link (the user's `~/.cache` often is); nothing under it may.
pub fn ensure_only_ours(root: &Path, below: &Path) -> Result<()> {
    ensure_path_only_ours(root, below)?;
    let me = engine::effective_uid();
    let mut folders: Vec<PathBuf> = match lstat(below)?.is_dir() {
        true => vec![below.to_path_buf()],
        false => Vec::new(),
    };
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).with_context(|| format!("cannot read {}", folder.display()))?;
        for entry in entries {
            let path = entry
                .with_context(|| format!("cannot read {}", folder.display()))?
                .path();
            let metadata = lstat(&path)?;
            judge(&path, &metadata, me, RUNTIME_REFUSED)?;
            if metadata.is_dir() {
                folders.push(path);
            }
        }
    }
    Ok(())
}

/// As `ensure_only_ours`, without what is inside `below`: the way from `root` to it.
pub fn ensure_path_only_ours(root: &Path, below: &Path) -> Result<()> {
    path_only_ours(root, below, RUNTIME_REFUSED)
}

/// As `ensure_path_only_ours`, for what mge keeps in its cache folder (the
/// algorithm cache): what it reads there chooses the engine's kernels.
pub fn ensure_kept_path_only_ours(root: &Path, below: &Path) -> Result<()> {
    path_only_ours(root, below, KEPT_REFUSED)
}

/// What a refusal says to do: of a runtime, and of what mge keeps.
const RUNTIME_REFUSED: &str =
    "mge loads no runtime that another user could change; remove it, or name a library you trust with --lite-lib";
const KEPT_REFUSED: &str =
    "mge reads nothing it keeps that another user could change; remove it (the algorithm cache may always be deleted)";

fn path_only_ours(root: &Path, below: &Path, refused: &str) -> Result<()> {
    let me = engine::effective_uid();
    let root = super::trusted_from(root);
    let metadata = std::fs::metadata(&root).with_context(|| format!("cannot read {}", root.display()))?;
    judge(&root, &metadata, me, refused)?;
    let mut path = root.clone();
    for component in below.strip_prefix(&root).unwrap_or(below).components() {
        path.push(component);
        let metadata = lstat(&path)?;
        judge(&path, &metadata, me, refused)?;
    }
    Ok(())
}

fn lstat(path: &Path) -> Result<Metadata> {
    std::fs::symlink_metadata(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Refuses the file or folder at `path` where `judged` finds something wrong, saying what `refused` says.
fn judge(path: &Path, metadata: &Metadata, me: u32, refused: &str) -> Result<()> {
    match judged(metadata.file_type().is_symlink(), metadata.uid(), metadata.mode(), me) {
        None => Ok(()),
        Some(reason) => bail!("{} is {reason}: {refused}", path.display()),
    }
}

/// What is wrong with a file or folder, for user `me`: a link (it can lead
/// anywhere), an owner who is neither `me` nor root, or a write bit for every user.
fn judged(is_link: bool, owner: u32, mode: u32, me: u32) -> Option<String> {
    if is_link {
        return Some("a symbolic link".into());
    }
    if owner != me && owner != 0 {
        return Some(format!("owned by uid {owner}, neither you (uid {me}) nor root"));
    }
    // Any user may write into it; a sticky folder (as /tmp) still lets anyone add entries.
    (mode & 0o002 != 0).then(|| "writable by every user".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_links_strangers_and_world_writable_files_are_judged_wrong() {
        assert_eq!(judged(false, 1000, 0o755, 1000), None);
        assert_eq!(judged(false, 0, 0o644, 1000), None);
        // Group-writable: the user's own group, as umask 002 makes it.
        assert_eq!(judged(false, 1000, 0o775, 1000), None);
        assert_eq!(judged(true, 1000, 0o777, 1000).as_deref(), Some("a symbolic link"));
        assert_eq!(
            judged(false, 1001, 0o755, 1000).as_deref(),
            Some("owned by uid 1001, neither you (uid 1000) nor root")
        );
        assert_eq!(
            judged(false, 0, 0o1777, 1000).as_deref(),
            Some("writable by every user")
        );
    }

    #[test]
    fn a_link_or_a_world_writable_file_anywhere_below_the_root_is_named() {
        let root = tempfile::tempdir().unwrap();
        let install = root.path().join("runtime/1.13.0");
        std::fs::create_dir_all(install.join("lib")).unwrap();
        std::fs::write(install.join("lib/a.so"), b"").unwrap();
        ensure_only_ours(root.path(), &install).unwrap();

        let file = install.join("lib/a.so");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let error = ensure_only_ours(root.path(), &install).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{} is writable by every user", file.display())),
            "{error}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();

        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("runtime/2.0.0")).unwrap();
        let linked = root.path().join("runtime/2.0.0");
        let error = ensure_only_ours(root.path(), &linked).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{} is a symbolic link", linked.display())),
            "{error}"
        );
    }
}
