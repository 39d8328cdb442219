//! Files appear whole or not at all: written to a temporary name beside the
//! target, then renamed over it.

use std::collections::HashSet;
use std::fs::Permissions;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::tensor::HostTensor;

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Checks, before any work is done, that `path` can be written later: it is
/// not a folder, and its folder exists and takes a new file.
pub fn ensure_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{} is a folder: name a file", path.display());
    }
    let folder = folder_of(path);
    if !folder.is_dir() {
        bail!("folder {} does not exist", folder.display());
    }
    staged_beside(path).map(drop)
}

/// An empty temporary file beside `path`, readable like any file a tool writes.
pub fn staged_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let folder = folder_of(path);
    tempfile::Builder::new()
        .prefix(".mge-")
        .permissions(Permissions::from_mode(0o644))
        .tempfile_in(folder)
        .with_context(|| format!("cannot write into {}", folder.display()))
}

pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let mut file = staged_beside(path)?;
    file.write_all(contents)
        .and_then(|_| file.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// `NAME.npy` per tensor into `dir` (created if missing), names made unique;
/// returns each tensor's name with the file that holds it.
pub fn write_outputs(dir: &Path, outputs: &[(String, HostTensor)]) -> Result<Vec<(String, PathBuf)>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create the folder {}", dir.display()))?;
    let mut used = HashSet::new();
    let mut written = Vec::new();
    for (name, value) in outputs {
        let stem = npy_file_stem(name);
        let mut file = format!("{stem}.npy");
        let mut suffix = 1;
        while !used.insert(file.clone()) {
            file = format!("{stem}_{suffix}.npy");
            suffix += 1;
        }
        let path = dir.join(file);
        write_atomically(&path, &value.to_npy())?;
        written.push((name.clone(), path));
    }
    Ok(written)
}

/// A file name for a tensor's name: characters a file name cannot hold become
/// `_`, and very long names (intermediate vars) are cut.
pub fn npy_file_stem(name: &str) -> String {
    const LONGEST: usize = 100;
    let mut stem: String = name
        .chars()
        .take(LONGEST)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, '_');
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_target_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        std::fs::write(&path, b"old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }

    #[test]
    fn fails_cleanly_when_the_folder_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_atomically(&dir.path().join("missing/out.bin"), b"x").is_err());
    }
}
