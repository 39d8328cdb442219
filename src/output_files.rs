//! Files appear whole or not at all: written to a temporary name beside the
//! target, then renamed over it. A symlink is followed, and the file it names
//! is replaced; a device or FIFO (`/dev/null`, `>(cat)`) is written to, never
//! replaced, and so is whatever a path through `/proc/self/fd` names
//! (`/dev/stdout`, `/dev/fd/3`), even a regular file: the shell opened it for
//! us. A set of files (`--outputs DIR`) is staged in a folder inside DIR (or
//! beside it, when DIR is new) and moved in only once every file is written.
//! Each output is claimed before any work (`claim_file`, `claim_set`): it
//! replaces or writes into no input of the command (`input_files`), under any
//! name; it takes no file of another output (stdout included) unless both
//! write through it; and its staging place works: an existing folder that
//! takes a new file, on the target's own mount, so that the rename at the end
//! cannot fail (EXDEV, EBUSY). Each staging file or folder is announced while
//! it exists (`watch_staging`), so that a supervising process can remove it
//! should this one be killed.

use std::collections::HashSet;
use std::fs::{self, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use anyhow::{bail, Context, Result};

use crate::input_files::{input_at, input_under, stdout_id, FileId};
use crate::tensor::HostTensor;

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// The nearest folder above `path` that is there (a file, or a link, stops
/// the search too: it is what a folder would have to be made in).
fn existing_above(path: &Path) -> &Path {
    let mut above = folder_of(path);
    while fs::symlink_metadata(above).is_err() && folder_of(above) != above {
        above = folder_of(above);
    }
    above
}

/// Makes the folders between the nearest existing one and `dir`'s own, as
/// `mkdir -p` does; returns those it made, deepest last.
fn make_folders_above(dir: &Path) -> Result<Vec<PathBuf>> {
    let above = existing_above(dir);
    let mut missing: Vec<&Path> = folder_of(dir)
        .ancestors()
        .take_while(|folder| *folder != above && !folder.as_os_str().is_empty())
        .collect();
    missing.reverse();
    let mut made = Vec::new();
    for folder in missing {
        if let Err(err) = fs::create_dir(folder) {
            remove_made(&made);
            return Err(err).with_context(|| format!("cannot create {}", folder.display()));
        }
        made.push(folder.to_path_buf());
    }
    Ok(made)
}

/// Removes the folders `make_folders_above` made, deepest first, where they are still empty.
fn remove_made(made: &[PathBuf]) {
    made.iter().rev().for_each(|folder| drop(fs::remove_dir(folder)));
}

/// Told of each staging file or folder: `true` once it exists, `false` once
/// it is gone (renamed into place or removed).
type StagingWatcher = fn(&Path, bool);

/// How staging names begin, and who is told of each staging file or folder.
static STAGING_WATCHER: OnceLock<(String, StagingWatcher)> = OnceLock::new();

/// Sets how staging names begin (the watcher removes only such paths), and
/// who is told of staging files and folders (once per process).
pub fn watch_staging(prefix: String, watcher: StagingWatcher) {
    let _ = STAGING_WATCHER.set((prefix, watcher));
}

fn staging_prefix() -> &'static str {
    STAGING_WATCHER.get().map_or(STAGING_PREFIX, |(prefix, _)| prefix)
}

/// How every staging file and folder's name begins (a child's: with its token after it).
const STAGING_PREFIX: &str = ".mge-";

/// A staging file or folder, announced while it exists.
struct Announced(PathBuf);

impl Announced {
    fn new(path: &Path) -> Announced {
        if let Some((_, watcher)) = STAGING_WATCHER.get() {
            watcher(path, true);
        }
        Announced(path.to_path_buf())
    }
}

impl Drop for Announced {
    fn drop(&mut self) {
        if let Some((_, watcher)) = STAGING_WATCHER.get() {
            watcher(&self.0, false);
        }
    }
}

/// What writing to a path means.
enum Target {
    /// A regular file, existing or not, after following symlinks: replaced by
    /// a rename.
    File(PathBuf),
    /// A device, FIFO or socket, or a file reached through another process's
    /// descriptors: written in place, at its end.
    Special(PathBuf),
    /// This process's stdout or stderr (`/dev/stdout`): written through the
    /// descriptor, so that what follows on it comes after, whatever it is.
    Stdout,
    Stderr,
}

fn target_of(path: &Path) -> Result<Target> {
    if path == Path::new("-") {
        bail!("'-' is no file name here: write /dev/stdout for stdout, or ./- for a file named '-'");
    }
    if let Some(proc_path) = through_proc(path) {
        let own_fd = proc_path
            .strip_prefix(Path::new("/proc").join(std::process::id().to_string()).join("fd"))
            .ok()
            .and_then(|fd| fd.to_str());
        return Ok(match own_fd {
            Some("1") => Target::Stdout,
            Some("2") => Target::Stderr,
            _ => Target::Special(proc_path),
        });
    }
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => bail!("{} is a folder: name a file", path.display()),
        Ok(meta) if meta.is_file() => {
            let resolved = fs::canonicalize(path).with_context(|| format!("cannot resolve {}", path.display()))?;
            Ok(Target::File(resolved))
        }
        Ok(_) => Ok(Target::Special(path.to_path_buf())),
        Err(err) if err.kind() == ErrorKind::NotFound => match fs::read_link(path) {
            // A dangling symlink: create the file it names, as a shell's `>` does.
            Ok(link) => Ok(Target::File(folder_of(path).join(link))),
            Err(_) => Ok(Target::File(path.to_path_buf())),
        },
        Err(err) => Err(err).with_context(|| format!("cannot write {}", path.display())),
    }
}

/// The path under `/proc` that `path` reaches, following its symlinks one at
/// a time (`/dev/stdout` -> `/proc/self/fd/1`), if it reaches one. What such a
/// path names is an open descriptor's file, which the kernel shows as a link.
fn through_proc(path: &Path) -> Option<PathBuf> {
    let mut current = path.to_path_buf();
    // As many links as the kernel follows.
    for _ in 0..40 {
        let folder = fs::canonicalize(folder_of(&current)).ok()?;
        let here = folder.join(current.file_name()?);
        if folder.starts_with("/proc") {
            return Some(here);
        }
        current = folder.join(fs::read_link(&here).ok()?);
    }
    None
}

/// Refuses a file at `path` that would replace one of the command's inputs.
fn refuse_input_at(path: &Path) -> Result<()> {
    let Some(input) = input_at(path) else {
        return Ok(());
    };
    let same_name = through_proc(path).is_none() && fs::canonicalize(path).is_ok_and(|resolved| resolved == input);
    match same_name {
        true => bail!("{} is a file this command reads: write elsewhere", path.display()),
        false => bail!(
            "{} is {}, a file this command reads: write elsewhere",
            path.display(),
            input.display()
        ),
    }
}

/// Where an output goes, to tell when two go to one.
#[derive(Clone, Debug)]
struct Place {
    /// Its canonical folder with its name; none for stdout's file.
    location: Option<PathBuf>,
    /// The file or folder there now, whatever its name.
    id: Option<FileId>,
}

impl Place {
    /// The place of `path`, a file or folder named in an existing folder.
    /// Below folders not made yet (a new set's, see `claim_set`), the place they will give it.
    fn of(path: &Path) -> Result<Place> {
        let above = existing_above(path);
        let folder = fs::canonicalize(above).with_context(|| format!("folder {} does not exist", above.display()))?;
        Ok(Place {
            location: Some(folder.join(path.strip_prefix(above).unwrap_or(path))),
            id: FileId::at(path),
        })
    }

    /// The file or folder there now, if still there: one removed since (as a
    /// replaced file is) frees its inode for another. Stdout keeps its own.
    fn current(&self) -> Option<FileId> {
        match &self.location {
            Some(location) => self.id.filter(|id| FileId::at(location) == Some(*id)),
            None => self.id,
        }
    }

    fn is(&self, other: &Place) -> bool {
        let id = self.current();
        (id.is_some() && id == other.current()) || (self.location.is_some() && self.location == other.location)
    }
}

/// The output claimed at `path`, if any: a file written there since (under
/// another inode now), or to be. A set must not replace it.
fn claimed_at(path: &Path) -> Option<String> {
    let place = Place::of(path).ok()?;
    let claimed = CLAIMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    claimed
        .iter()
        .find(|output| output.place.is(&place))
        .map(|output| output.what.clone())
}

/// An output the command claimed.
struct Claimed {
    /// The option that writes it (`--profile`), for a message.
    what: String,
    place: Place,
    /// Replaced by a rename (a file, a set's folder), not written through.
    replaced: bool,
}

static CLAIMED: Mutex<Vec<Claimed>> = Mutex::new(Vec::new());

/// Records the output `what` at `path`'s `place`. Refused where another
/// output goes (stdout too), unless both write through it: a file that one
/// replaces loses what the other wrote.
fn register(what: &str, path: &Path, place: Place, replaced: bool) -> Result<()> {
    let mut claimed = CLAIMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let stdout = stdout_id().map(|id| Claimed {
        what: "stdout (the report)".to_string(),
        place: Place {
            location: None,
            id: Some(id),
        },
        replaced: false,
    });
    if let Some(other) = claimed
        .iter()
        .chain(&stdout)
        .find(|other| other.what != what && other.place.is(&place) && (replaced || other.replaced))
    {
        bail!(
            "{} is also where {} goes: give each output its own",
            path.display(),
            other.what
        );
    }
    claimed.push(Claimed {
        what: what.to_string(),
        place,
        replaced,
    });
    Ok(())
}

/// Keeps every output off the file at `path`, which this process writes for
/// itself (`what` says what it is): a supervised child's channel to its
/// parent, which a `/dev/fd/N` of the user's could otherwise name.
pub fn reserve(what: &str, path: &Path) -> Result<()> {
    register(what, path, Place::of(path)?, true)
}

/// Claims `path` for the output `what` (`--profile`) before any work: it is
/// not a folder nor an input (claimed before it), and takes no other output's
/// file; a file to replace has an existing folder that takes a staged file,
/// on the file's own mount. A device, a FIFO or a descriptor must be open.
pub fn claim_file(what: &str, path: &Path) -> Result<()> {
    let target = target_of(path)?;
    refuse_input_at(path)?;
    match target {
        Target::File(file) => {
            let folder = folder_of(&file);
            if !folder.is_dir() {
                bail!("folder {} does not exist", folder.display());
            }
            if !same_mount(&file, folder) {
                bail!(
                    "{} is mounted on its own (a file bind-mounted in place) and cannot be replaced whole: write it through a descriptor instead (/dev/fd/3 with 3>FILE)",
                    path.display()
                );
            }
            staged_beside(&file)?;
            register(what, path, Place::of(&file)?, true)
        }
        Target::Special(special) => {
            let place = Place::of(&special)?;
            if place.id.is_none() {
                bail!("{} names no open file", path.display());
            }
            register(what, path, place, false)
        }
        // Written through this process's own descriptors, where the report goes too.
        Target::Stdout | Target::Stderr => Ok(()),
    }
}

/// Whether `target` (or, not there yet, the nearest folder above it) is on
/// the mount of the folder `staging`, so that a file staged there can be
/// renamed over it. The kernel's mount ids tell, where it shows them.
fn same_mount(target: &Path, staging: &Path) -> bool {
    let Some(existing) = target.ancestors().find(|path| path.exists()) else {
        return true;
    };
    match (mount_of(existing), mount_of(staging)) {
        (Some(target), Some(staging)) => target == staging,
        _ => true,
    }
}

/// The id of the mount `path` is on, from the `mnt_id` of a descriptor's fdinfo.
fn mount_of(path: &Path) -> Option<u64> {
    // O_PATH: no read permission needed, and a FIFO does not block.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
        .ok()?;
    let info = fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd())).ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("mnt_id:"))?
        .trim()
        .parse()
        .ok()
}

/// An empty temporary file beside `path`, readable like any file a tool writes.
pub fn staged_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let folder = folder_of(path);
    tempfile::Builder::new()
        .prefix(staging_prefix())
        .permissions(Permissions::from_mode(0o644))
        .tempfile_in(folder)
        .with_context(|| format!("cannot write into {}", folder.display()))
}

pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let failed = || format!("cannot write {}", path.display());
    let target = target_of(path)?;
    refuse_input_at(path)?;
    let written = match target {
        Target::Stdout => std::io::stdout().lock().write_all(contents),
        Target::Stderr => std::io::stderr().lock().write_all(contents),
        Target::Special(special) => OpenOptions::new()
            .append(true)
            .open(&special)
            .and_then(|mut file| file.write_all(contents)),
        Target::File(file) => {
            let mut staged = staged_beside(&file)?;
            let _announced = Announced::new(staged.path());
            // Through the file itself: the error names the target, not the staging file.
            staged
                .as_file_mut()
                .write_all(contents)
                .and_then(|_| staged.as_file().sync_all())
                .with_context(failed)?;
            staged.persist(&file).with_context(failed)?;
            return Ok(());
        }
    };
    written.with_context(failed)
}

/// Claims the folder `dir` for the set of files `what` (`--outputs`) writes,
/// before any work: it is a folder or does not exist yet, holds no input of
/// the command (claimed before it), is no other output's, and takes the
/// staging folder (inside it, or, when new, in the nearest existing folder
/// above it: the folders between are made as `mkdir -p` does, once the set is written).
pub fn claim_set(what: &str, dir: &Path) -> Result<()> {
    refuse_as_set_folder(dir)?;
    let above = existing_above(dir);
    if !above.is_dir() {
        bail!("{} is not a folder", above.display());
    }
    staging_folder(dir).map(drop)?;
    register(what, dir, Place::of(dir)?, true)
}

/// What cannot take a set of files: `-`, a file, a folder holding an input.
fn refuse_as_set_folder(dir: &Path) -> Result<()> {
    if dir == Path::new("-") {
        bail!("'-' is no folder name here: a set of files cannot go to stdout (write ./- for a folder named '-')");
    }
    if dir.exists() && !dir.is_dir() {
        bail!("{} exists and is not a folder", dir.display());
    }
    // A link to no folder cannot become one: the set's folder could not be
    // renamed over it once the work is done.
    if let (false, Ok(link)) = (dir.exists(), fs::read_link(dir)) {
        bail!(
            "{} is a symbolic link to {}, which leads to no folder: make the folder, or name another",
            dir.display(),
            link.display()
        );
    }
    if let Some(input) = input_under(dir) {
        bail!(
            "{} holds {}, which this command reads: write into another folder",
            dir.display(),
            input.display()
        );
    }
    Ok(())
}

/// Where a set for `dir` is staged: inside `dir` when it exists, so that its
/// files are renamed within one mount (`dir` may be a volume); in the nearest
/// existing folder above it otherwise, to become `dir` by one rename.
fn staging_folder(dir: &Path) -> Result<tempfile::TempDir> {
    let place = match dir.is_dir() {
        true => dir,
        false => existing_above(dir),
    };
    tempfile::Builder::new()
        .prefix(staging_prefix())
        .tempdir_in(place)
        .with_context(|| format!("cannot write into {}", place.display()))
}

/// Writes `NAME.npy` per tensor into `dir`, whole or not at all; see `write_set`.
/// Returns each tensor's name with the file that now holds it.
pub fn write_tensors(dir: &Path, tensors: &[(String, HostTensor)]) -> Result<Vec<(String, PathBuf)>> {
    let files = npy_files(tensors);
    let written = files
        .iter()
        .map(|(name, file, _)| (name.to_string(), dir.join(file)))
        .collect();
    write_set(dir, files.into_iter().map(|(_, file, tensor)| (file, tensor.to_npy())))?;
    Ok(written)
}

/// A file name per tensor, `NAME.npy` (see `npy_file_stem`); names that
/// collide get a numbered suffix. Each with the tensor's name and the tensor.
pub fn npy_files(tensors: &[(String, HostTensor)]) -> Vec<(&str, PathBuf, &HostTensor)> {
    let files = npy_file_names(tensors.iter().map(|(name, _)| name.as_str()));
    tensors
        .iter()
        .zip(files)
        .map(|((name, tensor), file)| (name.as_str(), file, tensor))
        .collect()
}

/// The file name of each tensor of `names`, in order, as `npy_files` names
/// them: what `--outputs DIR` writes, and `--expect DIR` reads.
pub fn npy_file_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    let mut used = HashSet::new();
    names
        .into_iter()
        .map(|name| {
            let stem = npy_file_stem(name);
            let mut file = format!("{stem}.npy");
            let mut suffix = 1;
            while !used.insert(file.clone()) {
                file = format!("{stem}_{suffix}.npy");
                suffix += 1;
            }
            PathBuf::from(file)
        })
        .collect()
}

/// Writes files (paths relative to `dir`) whole or not at all; see `StagedSet`.
pub fn write_set(dir: &Path, files: impl IntoIterator<Item = (PathBuf, Vec<u8>)>) -> Result<()> {
    let mut set = StagedSet::new(dir)?;
    for (file, contents) in files {
        set.add(file, &contents)?;
    }
    set.commit()
}

/// Files (paths relative to `dir`) written whole or not at all: each is
/// written into a staging folder (`staging_folder`) as it comes (by `add`, or
/// by a child process told its `path`), and `commit` moves them in. A new
/// `dir` is that folder renamed; into an existing one the files are renamed
/// one by one, which needs no space, so only the staging can fail for a full disk. A
/// set that fails, or is dropped before `commit`, leaves nothing behind, not
/// even an empty `dir`.
pub struct StagedSet {
    dir: PathBuf,
    /// Dropped before the announcement that it is gone (fields drop in order).
    staging: Option<tempfile::TempDir>,
    _announced: Announced,
    /// The staging folder's owner lock (see `hold_as_owner`): a set whose
    /// process was killed is removed by the next set staged beside it.
    owner: Option<fs::File>,
}

impl StagedSet {
    pub fn new(dir: &Path) -> Result<StagedSet> {
        refuse_as_set_folder(dir)?;
        let staging = staging_folder(dir)?;
        let owner = hold_as_owner(staging.path()).ok();
        remove_abandoned(staging.path(), STAGING_PREFIX);
        Ok(StagedSet {
            dir: dir.to_path_buf(),
            _announced: Announced::new(staging.path()),
            staging: Some(staging),
            owner,
        })
    }

    /// Where the set is staged: what a child process writes there is the set's.
    pub fn path(&self) -> &Path {
        self.staging.as_ref().expect("kept until the set is dropped").path()
    }

    /// Writes `file` (relative to the set's folder) into the staging folder.
    pub fn add(&mut self, file: PathBuf, contents: &[u8]) -> Result<()> {
        let path = self.path().join(&file);
        fs::create_dir_all(folder_of(&path))
            .and_then(|()| fs::write(&path, contents))
            .and_then(|()| fs::File::open(&path)?.sync_all())
            .with_context(|| format!("cannot write {}", self.dir.join(&file).display()))?;
        Ok(())
    }

    /// Copies the file `source` into the staging folder as `file` (relative to the set's folder).
    pub fn copy_in(&mut self, file: PathBuf, source: &Path) -> Result<()> {
        let path = self.path().join(&file);
        fs::create_dir_all(folder_of(&path))
            .and_then(|()| fs::copy(source, &path))
            .and_then(|_| fs::File::open(&path)?.sync_all())
            .with_context(|| format!("cannot copy {} to {}", source.display(), self.dir.join(&file).display()))
    }

    /// `file` as a hard link to the staged file `existing` (both relative to
    /// the set's folder): one file's bytes on the disk once, however many
    /// folders hold it. A copy where the file system takes no hard link.
    pub fn link_in(&mut self, file: PathBuf, existing: &Path) -> Result<()> {
        let (path, source) = (self.path().join(&file), self.path().join(existing));
        let linked = fs::create_dir_all(folder_of(&path)).and_then(|()| fs::hard_link(&source, &path));
        match linked {
            Ok(()) => Ok(()),
            Err(_) => self.copy_in(file, &source),
        }
    }

    /// Moves every staged file into the set's folder.
    pub fn commit(mut self) -> Result<()> {
        let dir = self.dir.clone();
        // The owner file is no file of the set; unlinked while still locked,
        // so that no other process takes the set for abandoned meanwhile.
        if let Some(owner) = self.owner.take() {
            fs::remove_file(self.path().join(OWNER_LOCK))
                .with_context(|| format!("cannot write into {}", dir.display()))?;
            drop(owner);
        }
        let mut written = Vec::new();
        staged_files(self.path(), Path::new(""), &mut written)
            .with_context(|| format!("cannot write into {}", dir.display()))?;
        fs::set_permissions(self.path(), Permissions::from_mode(0o755))
            .with_context(|| format!("cannot write into {}", dir.display()))?;
        if !dir.exists() {
            let made = make_folders_above(&dir)?;
            if let Err(err) = fs::rename(self.path(), &dir) {
                remove_made(&made);
                return Err(err).with_context(|| format!("cannot create {}", dir.display()));
            }
            // The staging folder is `dir` now: nothing left to remove.
            let _ = self.staging.take().map(tempfile::TempDir::keep);
            return Ok(());
        }
        // Checked first, so that a name taken by a folder, an input or a mount stops the set before any file moves.
        for target in written.iter().map(|file| dir.join(file)) {
            if target.is_dir() {
                bail!("cannot write {}: it is a folder", target.display());
            }
            refuse_input_at(&target)?;
            if let Some(other) = claimed_at(&target) {
                bail!("cannot write {}: {other} goes there", target.display());
            }
            if !same_mount(&target, self.path()) {
                bail!(
                    "cannot write {}: it is on another mount than {}",
                    target.display(),
                    dir.display()
                );
            }
        }
        for file in &written {
            let target = dir.join(file);
            fs::create_dir_all(folder_of(&target))
                .and_then(|()| fs::rename(self.path().join(file), &target))
                .with_context(|| format!("cannot write {}", target.display()))?;
        }
        Ok(())
    }
}

/// The file whose lock a staging or scratch folder's owner holds for as long
/// as it lives: the kernel lets go of it when the owner is gone, so a folder
/// whose lock is free was left by an mge that was killed.
const OWNER_LOCK: &str = ".owner";

/// Locks `dir`'s owner file, made under another name and renamed once
/// locked, so that no other process finds it unlocked while this one lives.
pub fn hold_as_owner(dir: &Path) -> std::io::Result<fs::File> {
    let locking = dir.join(".owner.new");
    let owner = fs::File::create(&locking)?;
    owner.lock()?;
    fs::rename(&locking, dir.join(OWNER_LOCK))?;
    Ok(owner)
}

/// Removes the folders beside `ours` named with `prefix` whose owners are
/// gone: this user's, real folders (not links), whose owner file is there
/// and unlocked. One without an owner file (an older mge's) stays.
pub fn remove_abandoned(ours: &Path, prefix: &str) {
    let Some(place) = ours.parent() else {
        return;
    };
    // This user's: as the folder just made is.
    let (Ok(entries), Ok(mine)) = (fs::read_dir(place), fs::metadata(ours)) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path == ours || !entry.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        let Ok(found) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !found.is_dir() || found.uid() != mine.uid() {
            continue;
        }
        let owner = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path.join(OWNER_LOCK));
        if owner.is_ok_and(|owner| owner.try_lock().is_ok()) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// The files under `root`, as paths relative to it (`relative` so far).
fn staged_files(root: &Path, relative: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(root.join(relative))? {
        let entry = entry?;
        let path = relative.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            staged_files(root, &path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

/// A file name for a tensor's name: letters and digits of any script, `.`,
/// `_` and `-` are kept, anything else (`/`, spaces, punctuation, control and
/// formatting characters) becomes `_`; a stem that would start with `.`
/// (`..`, a hidden file) gets a `_` in front; very long names
/// (intermediate vars) are cut at 100 bytes.
pub fn npy_file_stem(name: &str) -> String {
    const LONGEST_BYTES: usize = 100;
    let mut stem = String::new();
    for c in name.chars() {
        let c = if c.is_alphanumeric() || "._-".contains(c) {
            c
        } else {
            '_'
        };
        if stem.len() + c.len_utf8() > LONGEST_BYTES {
            break;
        }
        stem.push(c);
    }
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, '_');
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names stay readable in any script; what a path or a terminal reads
    /// otherwise does not reach the file name; names that meet keep apart.
    #[test]
    fn names_files_after_tensors_safely() {
        for (name, stem) in [
            ("输出", "输出"),
            ("Ausgabe_ü-1.x", "Ausgabe_ü-1.x"),
            ("a/../b", "a_.._b"),
            ("..", "_.."),
            ("", "_"),
            ("x\x1b[31m\u{202e}\n", "x__31m__"),
        ] {
            assert_eq!(npy_file_stem(name), stem, "{name:?}");
        }
        let long = npy_file_stem(&"输".repeat(100));
        assert!(long.len() <= 100 && long.chars().all(|c| c == '输'), "{long}");
        let tensor = HostTensor {
            shape: vec![1],
            dtype: crate::tensor::DType::F32,
            data: vec![0; 4],
        };
        let named = |name: &str| (name.to_string(), tensor.clone());
        let tensors = [named("a/b"), named("a_b"), named("a_b_1")];
        let files: Vec<PathBuf> = npy_files(&tensors).into_iter().map(|(_, file, _)| file).collect();
        assert_eq!(files, ["a_b.npy", "a_b_1.npy", "a_b_1_1.npy"].map(PathBuf::from));
    }

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
        assert!(claim_file("test", &dir.path().join("missing/out.bin")).is_err());
        assert!(claim_file("test", dir.path()).is_err());
    }

    /// The file a symlink names is replaced; the link stays a link.
    #[test]
    fn follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let (file, link, dangling) = (
            dir.path().join("real.xml"),
            dir.path().join("link.xml"),
            dir.path().join("dangling.xml"),
        );
        std::fs::write(&file, b"old").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        std::os::unix::fs::symlink("made.xml", &dangling).unwrap();
        write_atomically(&link, b"new").unwrap();
        write_atomically(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        assert_eq!(std::fs::read(dir.path().join("made.xml")).unwrap(), b"made");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    /// A FIFO is written to, not replaced by a regular file.
    #[test]
    fn writes_into_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        claim_file("test", &fifo).unwrap();
        write_atomically(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(!std::fs::metadata(&fifo).unwrap().is_file());
    }

    #[test]
    fn writes_a_set_whole() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let files = || {
            [
                (PathBuf::from("a.npy"), b"a".to_vec()),
                (PathBuf::from("0/b.npy"), b"b".to_vec()),
            ]
        };
        write_set(&out, files()).unwrap();
        assert_eq!(std::fs::read(out.join("0/b.npy")).unwrap(), b"b");
        // Into an existing folder: files replaced, others kept.
        std::fs::write(out.join("keep.txt"), b"k").unwrap();
        write_set(&out, files()).unwrap();
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no staging left");
    }

    /// Neither a file nor a set replaces an input; `-` names neither.
    #[test]
    fn spares_inputs_and_refuses_a_dash() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.mge");
        std::fs::write(&model, b"model").unwrap();
        crate::input_files::claim(&model).unwrap();
        let link = dir.path().join("link.mge");
        std::os::unix::fs::symlink(&model, &link).unwrap();
        for target in [&model, &link] {
            let err = claim_file("test", target).unwrap_err().to_string();
            assert!(err.ends_with("is a file this command reads: write elsewhere"), "{err}");
            assert!(write_atomically(target, b"over").is_err());
        }
        let err = claim_set("test", dir.path()).unwrap_err().to_string();
        assert!(err.contains("m.mge, which this command reads"), "{err}");
        assert!(write_set(dir.path(), [(PathBuf::from("a.npy"), b"a".to_vec())]).is_err());
        assert_eq!(std::fs::read(&model).unwrap(), b"model");
        assert!(claim_file("test", Path::new("-")).is_err() && claim_set("test", Path::new("-")).is_err());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "nothing staged is left"
        );
    }

    /// Two outputs take one file, under any name, only where both write
    /// through it; two sets take no one folder.
    #[test]
    fn refuses_one_place_for_two_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let (new, file, hard) = (dir.path().join("new"), dir.path().join("x"), dir.path().join("hard"));
        claim_file("--first", &new).unwrap();
        let err = claim_file("--second", &dir.path().join("./new"))
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("new is also where --first goes: give each output its own"),
            "{err}"
        );
        std::fs::write(&file, b"x").unwrap();
        std::fs::hard_link(&file, &hard).unwrap();
        claim_file("--third", &file).unwrap();
        assert!(claim_file("--fourth", &hard).is_err());
        claim_file("--null", Path::new("/dev/null")).unwrap();
        claim_file("--also-null", Path::new("/dev/null")).unwrap();
        claim_set("--set", &dir.path().join("out")).unwrap();
        assert!(claim_set("--other-set", &dir.path().join("out")).is_err());
        assert!(claim_file("--file", &dir.path().join("out")).is_err());
        let closed = claim_file("--closed", Path::new("/dev/fd/999"))
            .unwrap_err()
            .to_string();
        assert!(closed.ends_with("/dev/fd/999 names no open file"), "{closed}");
    }

    /// A set into an existing folder is staged inside it, on its mount.
    #[test]
    fn stages_inside_an_existing_folder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let set = StagedSet::new(&out).unwrap();
        assert_eq!(set.path().parent(), Some(out.as_path()));
        drop(set);
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        assert_eq!(
            StagedSet::new(&dir.path().join("new")).unwrap().path().parent(),
            Some(dir.path())
        );
    }

    /// `/dev/stdout` and `/dev/fd/N` reach this process's descriptors through
    /// `/proc`, whatever file is behind them; other paths do not.
    #[test]
    fn tells_paths_through_proc() {
        let fd = Path::new("/proc").join(std::process::id().to_string()).join("fd");
        assert_eq!(through_proc(Path::new("/dev/stdout")), Some(fd.join("1")));
        assert_eq!(through_proc(Path::new("/dev/fd/2")), Some(fd.join("2")));
        assert!(matches!(target_of(Path::new("/dev/stdout")), Ok(Target::Stdout)));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(through_proc(&dir.path().join("out.json")), None);
    }

    /// A file that cannot be written (here: a name that is a folder) leaves
    /// neither a partial set nor a new empty folder.
    #[test]
    fn a_failed_set_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let files = [
            (PathBuf::from("a.npy"), b"a".to_vec()),
            (PathBuf::from("a.npy/b"), b"b".to_vec()),
        ];
        assert!(write_set(&out, files).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        std::fs::write(&out, b"a file").unwrap();
        assert!(claim_set("test", &out).is_err());
        // A file on the way of folders not made yet.
        assert!(claim_set("test", &out.join("no/such/dir")).is_err());
        // A dangling link is refused when claimed, not once the set is written.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
        let err = claim_set("test", &dangling).unwrap_err().to_string();
        assert!(
            err.ends_with("is a symbolic link to nowhere, which leads to no folder: make the folder, or name another"),
            "{err}"
        );
    }
}
