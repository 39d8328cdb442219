//! Which model files a command works on, for `check` and `compare`: folders
//! expanded to the `*.mge` files under them, each file once, and with
//! `--shard` one deterministic slice.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::cli::Shard;
use crate::settings::Global;

/// `paths` in the order given, a folder replaced by the `*.mge` files under it
/// (recursively, sorted by path), a file named twice (by the same path or
/// another, through a link) kept once; with `shard`, only its slice.
pub fn select_models(paths: &[PathBuf], shard: Option<Shard>, global: &Global) -> Result<Vec<PathBuf>> {
    let mut seen: HashMap<FileKey, PathBuf> = HashMap::new();
    let mut models = Vec::new();
    for path in paths {
        let found = if path.is_dir() {
            let mut found = Vec::new();
            find_models(path, &mut found)?;
            if found.is_empty() {
                bail!("folder {} holds no *.mge file", path.display());
            }
            found.sort();
            found
        } else {
            vec![path.clone()]
        };
        for model in found {
            match seen.get(&FileKey::of(&model)) {
                Some(first) if *first != model => global.note(format!(
                    "{} is the file {} names: checked once",
                    model.display(),
                    first.display()
                )),
                Some(_) => {}
                None => {
                    seen.insert(FileKey::of(&model), model.clone());
                    models.push(model);
                }
            }
        }
    }
    let Some(shard) = shard else {
        return Ok(models);
    };
    let slice = shard_of(&models, shard);
    if slice.is_empty() {
        global.note(format!(
            "shard {}/{} has no model: there are {} in all",
            shard.index,
            shard.count,
            models.len()
        ));
    }
    Ok(slice)
}

/// Which file a path names: its device and inode when it names one, else
/// the path (a missing model is reported by its name).
#[derive(Hash, PartialEq, Eq)]
enum FileKey {
    File(u64, u64),
    Path(PathBuf),
}

impl FileKey {
    fn of(path: &Path) -> FileKey {
        match std::fs::metadata(path) {
            Ok(metadata) => FileKey::File(metadata.dev(), metadata.ino()),
            Err(_) => FileKey::Path(path.to_path_buf()),
        }
    }
}

/// Slice `shard` of `models`: sorted by path, model `i` (from 0) belongs to
/// shard `i mod N + 1`. The slice depends only on the set of paths, not on
/// their order, and the shards' sizes differ by one at most. Kept in the given order.
pub fn shard_of(models: &[PathBuf], shard: Shard) -> Vec<PathBuf> {
    let mut sorted: Vec<&PathBuf> = models.iter().collect();
    sorted.sort();
    let mine: HashSet<&PathBuf> = sorted.into_iter().skip(shard.index - 1).step_by(shard.count).collect();
    models.iter().filter(|model| mine.contains(model)).cloned().collect()
}

/// The `*.mge` entries under `folder` that are not folders: files, and links
/// that lead nowhere (reported as models that cannot be read, not skipped).
/// Symbolic links to folders are not followed, so a link cycle cannot make
/// the search endless.
fn find_models(folder: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(folder).with_context(|| format!("cannot list folder {}", folder.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list folder {}", folder.display()))?;
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            find_models(&path, found)?;
        } else if path.extension().is_some_and(|ext| ext == "mge") && !path.is_dir() {
            found.push(path);
        }
    }
    Ok(())
}

/// The `*.mge` files under `folder`, by their path under it (as `check` finds them).
pub fn models_under(folder: &Path) -> Result<BTreeSet<PathBuf>> {
    let mut found = Vec::new();
    find_models(folder, &mut found)?;
    Ok(found
        .into_iter()
        .filter_map(|model| model.strip_prefix(folder).ok().map(Path::to_path_buf))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn shards_cover_every_model_once_whatever_the_order() {
        let models = paths(&["e.mge", "a.mge", "d/x.mge", "c.mge", "b.mge"]);
        let mut reversed = models.clone();
        reversed.reverse();
        let mut covered = Vec::new();
        for index in 1..=3 {
            let shard = Shard { index, count: 3 };
            let slice = shard_of(&models, shard);
            let mut other = shard_of(&reversed, shard);
            other.reverse();
            assert_eq!(slice, other, "shard {index}: the same models in either order");
            assert!((1..=2).contains(&slice.len()), "{slice:?}");
            covered.extend(slice);
        }
        covered.sort();
        let mut all = models.clone();
        all.sort();
        assert_eq!(covered, all);
        assert_eq!(shard_of(&models, Shard { index: 1, count: 1 }), models);
        assert_eq!(
            shard_of(&models, Shard { index: 2, count: 3 }),
            paths(&["e.mge", "b.mge"])
        );
    }

    #[test]
    fn folders_become_their_models_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        for file in ["b.mge", "a.mge", "notes.txt", "sub/deeper/c.mge", "sub/a.mge"] {
            std::fs::write(root.join(file), b"").unwrap();
        }
        std::os::unix::fs::symlink(root, root.join("sub/loop")).unwrap();
        let global = Global {
            runtime: Default::default(),
            verbose: false,
            quiet: true,
            mute: false,
        };
        let given = [root.join("b.mge"), root.to_path_buf(), PathBuf::from("missing.mge")];
        let models = select_models(&given, None, &global).unwrap();
        let expected: Vec<PathBuf> = ["b.mge", "a.mge", "sub/a.mge", "sub/deeper/c.mge"]
            .iter()
            .map(|file| root.join(file))
            .chain([PathBuf::from("missing.mge")])
            .collect();
        assert_eq!(models, expected);
        // A dangling link is a model that cannot be read, not one skipped; one
        // file reached by two paths is checked once.
        std::os::unix::fs::symlink(root.join("gone.mge"), root.join("sub/dangling.mge")).unwrap();
        std::os::unix::fs::symlink(root.join("a.mge"), root.join("sub/deeper/alias.mge")).unwrap();
        let models = select_models(&[root.to_path_buf()], None, &global).unwrap();
        let expected: Vec<PathBuf> = ["a.mge", "b.mge", "sub/a.mge", "sub/dangling.mge", "sub/deeper/c.mge"]
            .iter()
            .map(|file| root.join(file))
            .collect();
        assert_eq!(models, expected);
        let empty = root.join("sub/empty");
        std::fs::create_dir(&empty).unwrap();
        let err = select_models(&[empty], None, &global).unwrap_err();
        assert!(err.to_string().contains("holds no *.mge"), "{err}");
    }
}
