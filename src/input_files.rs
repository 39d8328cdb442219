//! Every file the tool reads is opened here: a regular file no larger than
//! the bound of its kind, both checked before a byte is read, so that
//! `/dev/zero`, a FIFO or a runaway file is one line of error, not memory
//! filled or a read that never returns. The files the user gave to be read
//! are remembered as this command's inputs, which no output may replace
//! (`output_files` asks `input_at` and `input_under`), stdout included: an
//! input that is the file stdout writes to (`> m.mge`, `1<>m.mge`) is
//! refused, as `cat` refuses "input file is output file".

use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use anyhow::{bail, Context, Result};

use crate::memory;

/// A kind of file the tool reads: what to call it, how large it may be, and
/// whether it is an input that outputs must spare.
pub struct Kind {
    pub what: &'static str,
    max_bytes: u64,
    /// A file the user gave to be read; not one the engine wrote for the tool,
    /// nor the fast-run cache, which the tool reads and writes back itself.
    input: bool,
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Four FBS v2 graphs of the 4 GiB their size prefix can count.
pub const MODEL: Kind = Kind::input("model", 16 * GIB);
/// One `SPEC` per line; a JSON literal of a large input is a few MiB.
pub const SPEC_LIST: Kind = Kind::input("spec file", 64 * MIB);
pub const OPTIONS: Kind = Kind::input("options file", MIB);
/// `--model-key @FILE`: a key of a few dozen bytes.
pub const MODEL_KEY: Kind = Kind::input("key file", 4 * KIB);
/// A tensor of 4 GiB, the most a feed may hold, with the longest header.
pub const NPY: Kind = Kind::input(".npy file", 4 * GIB + 128 * KIB);
/// An archive is read one array at a time (each bounded as `NPY`).
pub const NPZ: Kind = Kind::input(".npz archive", 64 * GIB);
pub const IMAGE: Kind = Kind::input("image", GIB);
pub const IO_DUMP_INDEX: Kind = Kind::input("io dump index", GIB);
/// A file of an io dump written elsewhere (load_and_run, megenginelite): one
/// var as `ENGINE_DUMP` holds it.
pub const RAW_IO_DUMP: Kind = Kind::input("raw io dump file", 4 * GIB + MIB);
/// An engine profile written elsewhere (`profile --analyze`), as `ENGINE_PROFILE`.
pub const RECORDED_PROFILE: Kind = Kind::input("engine profile", 4 * GIB);
pub const FAST_RUN_CACHE: Kind = Kind::internal("fast-run cache", GIB);
/// TensorRT's serialized engines, read and written back like the fast-run cache.
pub const TENSORRT_CACHE: Kind = Kind::internal("TensorRT cache", 4 * GIB);
/// What the engine wrote for the tool: one var of its io dump (a tensor and
/// its title), its text dump, its profile.
pub const ENGINE_DUMP: Kind = Kind::internal("engine's dump", 4 * GIB + MIB);
pub const ENGINE_PROFILE: Kind = Kind::internal("engine's profile", 4 * GIB);
pub const RUNTIME_RECORD: Kind = Kind::internal("runtime record", 16 * MIB);
/// tune's record of a search (`tune::record`): a few rows, some KiB.
pub const SEARCH_RECORD: Kind = Kind::internal("tune's search record", 16 * MIB);
/// What a supervised child recorded for `--repro` (`supervise::repro_record`): its manifest, a version.
pub const CHILD_RECORD: Kind = Kind::internal("child's record", MIB);
/// `runtime install --wheel`: MegEngine's CUDA 11 wheels are a few GiB.
pub const WHEEL: Kind = Kind::input("wheel", 64 * GIB);

impl Kind {
    const fn input(what: &'static str, max_bytes: u64) -> Kind {
        Kind {
            what,
            max_bytes,
            input: true,
        }
    }

    const fn internal(what: &'static str, max_bytes: u64) -> Kind {
        Kind {
            what,
            max_bytes,
            input: false,
        }
    }

    /// Refuses `len` bytes for the file (or archive member) `name` of this kind.
    pub fn check_len(&self, name: impl fmt::Display, len: u64) -> Result<()> {
        if len > self.max_bytes {
            bail!(
                "{} {name} holds {len} bytes, over the limit of {}",
                self.what,
                Bytes(self.max_bytes)
            );
        }
        Ok(())
    }
}

/// A byte count in the largest binary unit that divides it.
struct Bytes(u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            n if n >= GIB && n % GIB == 0 => write!(f, "{} GiB", n / GIB),
            n if n >= MIB && n % MIB == 0 => write!(f, "{} MiB", n / MIB),
            n => write!(f, "{n} bytes"),
        }
    }
}

/// Opens `path` for reading: a regular file of at most the bound of `kind`.
/// Returns it with its length. Nothing that is not a regular file is opened
/// (a FIFO would block, a device never end); one swapped in meanwhile is
/// caught on the open file.
pub fn open(path: &Path, kind: &Kind) -> Result<(File, u64)> {
    let cannot_read = || format!("cannot read {} {}", kind.what, path.display());
    regular(path, kind, &fs::metadata(path).with_context(cannot_read)?)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(cannot_read)?;
    let metadata = file.metadata().with_context(cannot_read)?;
    regular(path, kind, &metadata)?;
    kind.check_len(path.display(), metadata.len())?;
    if kind.input {
        remember(path, &metadata)?;
    }
    Ok((file, metadata.len()))
}

fn regular(path: &Path, kind: &Kind, metadata: &Metadata) -> Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    let file_type = metadata.file_type();
    let what = if file_type.is_dir() {
        "a folder"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "a socket"
    };
    bail!(
        "{} {} is not a regular file but {what}: give a file",
        kind.what,
        path.display()
    )
}

/// The whole of `path`, opened as `open` does. A file that grows past its
/// bound while it is read (as files in `/proc` can) is refused too.
pub fn read(path: &Path, kind: &Kind) -> Result<Vec<u8>> {
    let (file, len) = open(path, kind)?;
    let mut bytes = memory::with_capacity(
        usize::try_from(len).unwrap_or(usize::MAX),
        &format!("the {}", kind.what),
    )
    .with_context(|| format!("cannot read {} {}", kind.what, path.display()))?;
    file.take(kind.max_bytes + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {} {}", kind.what, path.display()))?;
    kind.check_len(path.display(), bytes.len() as u64)?;
    Ok(bytes)
}

/// `read`, as UTF-8 text.
pub fn read_text(path: &Path, kind: &Kind) -> Result<String> {
    String::from_utf8(read(path, kind)?)
        .map_err(|_| anyhow::anyhow!("{} {} is not UTF-8 text", kind.what, path.display()))
}

/// `read`, or `None` when there is no file at `path`.
pub fn read_if_present(path: &Path, kind: &Kind) -> Result<Option<Vec<u8>>> {
    match fs::metadata(path) {
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        _ => read(path, kind).map(Some),
    }
}

/// Which file a path or descriptor reaches, whatever its name: its device
/// and inode (a hard link, a bind mount, `/proc/self/fd/N` reach the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    pub fn of(metadata: &Metadata) -> FileId {
        FileId {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }

    /// The file at `path`, through any links; `None` where there is none.
    pub fn at(path: &Path) -> Option<FileId> {
        fs::metadata(path).ok().map(|metadata| FileId::of(&metadata))
    }
}

/// The file stdout writes to. Looked at once, before the engine's output is
/// kept off stdout for a while (the first input is claimed before that).
pub fn stdout_id() -> Option<FileId> {
    static STDOUT: OnceLock<Option<FileId>> = OnceLock::new();
    *STDOUT.get_or_init(|| {
        let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        File::from(stdout).metadata().ok().map(|metadata| FileId::of(&metadata))
    })
}

/// A file this command reads: where it is, and which file it is.
struct Input {
    path: PathBuf,
    id: FileId,
}

impl Input {
    /// Still at its path: a file removed since frees its inode for another.
    fn still_there(&self) -> bool {
        FileId::at(&self.path) == Some(self.id)
    }
}

static INPUTS: Mutex<Vec<Input>> = Mutex::new(Vec::new());

fn remember(path: &Path, metadata: &Metadata) -> Result<()> {
    let Ok(path) = fs::canonicalize(path) else {
        return Ok(());
    };
    let id = FileId::of(metadata);
    if stdout_id() == Some(id) {
        bail!(
            "stdout goes to {}, a file this command reads: send it elsewhere",
            path.display()
        );
    }
    let mut inputs = INPUTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !inputs.iter().any(|input| input.path == path) {
        inputs.push(Input { path, id });
    }
    Ok(())
}

/// Remembers `path` as an input of this command before it is read, or when
/// another process reads it (a `check` worker, a `tune` candidate): outputs
/// are checked against the inputs claimed before them, so inputs come first.
/// A path with no file is no input yet.
pub fn claim(path: &Path) -> Result<()> {
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => remember(path, &metadata),
        _ => Ok(()),
    }
}

/// The input that a file written at `target` would replace or write into:
/// `target` itself (through any links, `/proc/self/fd` too), or another name
/// of the same file.
pub fn input_at(target: &Path) -> Option<PathBuf> {
    let id = FileId::at(target)?;
    let inputs = INPUTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    inputs
        .iter()
        .find(|input| input.id == id && input.still_there())
        .map(|input| input.path.clone())
}

/// An input inside the folder `dir` (at any depth, under any of the folder's
/// names: a symlink, a bind mount), which a set of files written into `dir`
/// could replace.
pub fn input_under(dir: &Path) -> Option<PathBuf> {
    let dir = FileId::at(dir)?;
    let inputs = INPUTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    inputs
        .iter()
        .find(|input| {
            input.still_there()
                && input
                    .path
                    .ancestors()
                    .skip(1)
                    .any(|folder| FileId::at(folder) == Some(dir))
        })
        .map(|input| input.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        for (path, needle) in [(Path::new("/dev/zero"), "a character device"), (dir.path(), "a folder")] {
            let err = read(path, &SPEC_LIST).unwrap_err().to_string();
            assert!(err.contains(needle) && err.contains("spec file"), "{err}");
        }
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let err = read(&fifo, &OPTIONS).unwrap_err().to_string();
        assert!(err.contains("a FIFO"), "{err}");
        let missing = read(&dir.path().join("missing"), &MODEL).unwrap_err();
        assert!(format!("{missing:#}").contains("No such file"), "{missing:#}");
        assert!(read_if_present(&dir.path().join("missing"), &MODEL).unwrap().is_none());
    }

    #[test]
    fn refuses_a_file_over_its_bound_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        File::create(&big).unwrap().set_len(2 * MIB).unwrap();
        let err = read(&big, &OPTIONS).unwrap_err().to_string();
        assert!(
            err.ends_with("big.json holds 2097152 bytes, over the limit of 1 MiB"),
            "{err}"
        );
        std::fs::write(&big, b"{}").unwrap();
        assert_eq!(read_text(&big, &OPTIONS).unwrap(), "{}");
    }

    /// Inputs are found under other names (a link) and inside folders; the
    /// files the engine wrote for the tool are not inputs.
    #[test]
    fn remembers_inputs_by_file() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let [model, cache] = [sub.join("m.mge"), dir.path().join("c.cache")];
        for file in [&model, &cache] {
            std::fs::write(file, b"x").unwrap();
        }
        let link = dir.path().join("link.mge");
        std::os::unix::fs::symlink(&model, &link).unwrap();
        read(&link, &MODEL).unwrap();
        read(&cache, &FAST_RUN_CACHE).unwrap();
        let model = fs::canonicalize(&model).unwrap();
        assert_eq!(input_at(&link), Some(model.clone()));
        assert_eq!(input_under(dir.path()), Some(model));
        assert_eq!(input_at(&cache), None);
        assert_eq!(input_under(&dir.path().join("missing")), None);
    }
}
