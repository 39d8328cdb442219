//! What a supervised child records for its parent's reproducer (`--repro`):
//! the exact values it fed the engine, and the runtime's version. The parent
//! names a folder of its own making in the child's environment (`RECORD_ENV`,
//! which it sets or removes for every child, and only a supervised child
//! reads); the child writes nothing elsewhere, and nothing over a file: a
//! record that cannot be written is left out, never the run's failure (the
//! reproducer then says that no feeds were recorded).
//!
//! The layout, read back by `ChildRecord::read`:
//! `runtime_version` (one line), `engine_stdout` (what the engine printed on
//! the stdout the tool captures: its AssertEqual errors; its first `KEPT_HALF`
//! bytes, the last as many in the ring `engine_stdout.tail`, the count of all
//! in `engine_stdout.length`), and the feeds of a fed run as
//! `feeds/FILE.npy` with `feeds/inputs.json` (`[[NAME, FILE], ...]`, in the
//! model's input order), or each embedded testcase's as `feeds/INDEX/...` alike.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};

use crate::feeds::Feed;
use crate::input_files;
use crate::mge_command::RECORD_ENV;
use crate::output_files::npy_file_names;

use super::KEPT_HALF;

/// The manifest of a folder of feeds.
const INPUTS: &str = "inputs.json";
const RUNTIME_VERSION: &str = "runtime_version";
const ENGINE_STDOUT: &str = "engine_stdout";
const ENGINE_STDOUT_TAIL: &str = "engine_stdout.tail";
const ENGINE_STDOUT_LENGTH: &str = "engine_stdout.length";

/// Where this process records, once `start` was called: the folder of the
/// current task (a check worker's model has one of its own).
static FOLDER: Mutex<Option<(PathBuf, PathBuf)>> = Mutex::new(None);

/// A supervised child records into the folder its parent named, if it named one.
pub fn start() {
    if let Some(dir) = std::env::var_os(RECORD_ENV).filter(|_| super::is_child()) {
        let dir = PathBuf::from(dir);
        *lock() = Some((dir.clone(), dir));
    }
}

/// Records of model number `index` (of a check worker) go to `DIR/INDEX`.
pub fn task(index: usize) {
    if let Some((root, current)) = lock().as_mut() {
        *current = root.join(index.to_string());
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<(PathBuf, PathBuf)>> {
    FOLDER.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The current task's folder, made if need be, when this process records.
fn folder() -> Option<PathBuf> {
    let current = lock().as_ref()?.1.clone();
    fs::create_dir_all(&current).ok()?;
    Some(current)
}

/// The runtime's version, as the engine gives it.
pub fn runtime_version(version: (i32, i32, i32)) {
    if let Some(folder) = folder() {
        let (major, minor, patch) = version;
        let version = format!("{major}.{minor}.{patch}\n");
        let _ = create_new(&folder.join(RUNTIME_VERSION), |out| out.write_all(version.as_bytes()));
    }
}

/// What the engine printed on the stdout the tool captured (the AssertEqual
/// errors of a testcase), added to what it printed before: its first and last
/// `KEPT_HALF` bytes, as `engine.log` keeps its stderr, however long it ran.
pub fn engine_stdout(text: &str) {
    if let Some(folder) = folder() {
        let _ = append_kept(&folder, text.as_bytes());
    }
}

/// Appends `bytes` to the engine's stdout in `folder`: to its head while
/// that is short of `KEPT_HALF`, then into the ring of its tail, each byte
/// at its count modulo `KEPT_HALF`; the count follows.
fn append_kept(folder: &Path, mut bytes: &[u8]) -> io::Result<()> {
    let length_file = folder.join(ENGINE_STDOUT_LENGTH);
    let mut length: usize = fs::read_to_string(&length_file)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    if length < KEPT_HALF {
        let head = bytes.len().min(KEPT_HALF - length);
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(folder.join(ENGINE_STDOUT))?;
        file.write_all(&bytes[..head])?;
        (length, bytes) = (length + head, &bytes[head..]);
    }
    if !bytes.is_empty() {
        // Only the last `KEPT_HALF` bytes can stay.
        let passed = bytes.len().saturating_sub(KEPT_HALF);
        (length, bytes) = (length + passed, &bytes[passed..]);
        let ring = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(folder.join(ENGINE_STDOUT_TAIL))?;
        while !bytes.is_empty() {
            let at = (length - KEPT_HALF) % KEPT_HALF;
            let piece = bytes.len().min(KEPT_HALF - at);
            ring.write_all_at(&bytes[..piece], at as u64)?;
            (length, bytes) = (length + piece, &bytes[piece..]);
        }
    }
    fs::write(length_file, length.to_string())
}

/// The feeds of a fed run, before the engine runs on them.
pub fn fed(feeds: &[Feed]) {
    if let Some(folder) = folder() {
        let _ = write_feeds(&folder.join("feeds"), feeds);
    }
}

/// The feeds of embedded testcase number `index`, before the engine runs on them.
pub fn testcase(index: usize, feeds: &[Feed]) {
    if let Some(folder) = folder() {
        let feeds_folder = folder.join("feeds");
        let _ = fs::create_dir_all(&feeds_folder);
        let _ = write_feeds(&feeds_folder.join(index.to_string()), feeds);
    }
}

/// `dir` (new) with a `.npy` file per feed and their manifest, written last.
fn write_feeds(dir: &Path, feeds: &[Feed]) -> Result<()> {
    fs::create_dir(dir)?;
    let files = npy_file_names(feeds.iter().map(|feed| feed.name.as_str()));
    let mut manifest = Vec::new();
    for (feed, file) in feeds.iter().zip(files) {
        create_new(&dir.join(&file), |out| feed.tensor.write_npy(out))?;
        manifest.push((feed.name.clone(), file.to_string_lossy().into_owned()));
    }
    let manifest = serde_json::to_vec(&manifest)?;
    create_new(&dir.join(INPUTS), |out| out.write_all(&manifest))
}

/// A new file at `path`, written by `write`.
fn create_new(path: &Path, write: impl FnOnce(&mut File) -> io::Result<()>) -> Result<()> {
    File::create_new(path)
        .and_then(|mut file| write(&mut file))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The engine's stdout that `append_kept` kept in `dir`: its head, and
/// its tail after how many bytes between were left out.
fn read_kept(dir: &Path) -> Result<Option<String>> {
    let read = |file: &str| input_files::read_if_present(&dir.join(file), &input_files::CHILD_RECORD);
    let Some(mut kept) = read(ENGINE_STDOUT)? else {
        return Ok(None);
    };
    let length = read(ENGINE_STDOUT_LENGTH)?
        .and_then(|text| String::from_utf8_lossy(&text).trim().parse::<usize>().ok())
        .unwrap_or(kept.len());
    if length > KEPT_HALF {
        let ring = read(ENGINE_STDOUT_TAIL)?.unwrap_or_default();
        let start = KEPT_HALF.max(length - KEPT_HALF);
        if start > KEPT_HALF {
            kept.extend_from_slice(format!("\n[... {} bytes left out ...]\n", start - KEPT_HALF).as_bytes());
        }
        kept.extend((start..length).filter_map(|at| ring.get((at - KEPT_HALF) % KEPT_HALF)));
    }
    Ok(Some(String::from_utf8_lossy(&kept).into_owned()))
}

/// What a child recorded, read back by the parent.
pub struct ChildRecord {
    /// The runtime's version, if the child loaded it.
    pub runtime_version: Option<String>,
    /// What the engine printed on the stdout the tool captured.
    pub engine_stdout: Option<String>,
    /// The feeds of a fed run: each input's name and its file under `feeds/`.
    pub fed: Vec<(String, String)>,
    /// Where the feeds are (`feeds/`), if the child got that far.
    pub feeds: Option<PathBuf>,
}

impl ChildRecord {
    pub fn read(dir: &Path) -> Result<ChildRecord> {
        let read = |file: &str| input_files::read_if_present(&dir.join(file), &input_files::CHILD_RECORD);
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        let version = read(RUNTIME_VERSION)?;
        let engine_stdout = read_kept(dir)?;
        let feeds = dir.join("feeds");
        let fed = fed_in(&feeds)?;
        Ok(ChildRecord {
            runtime_version: version.map(|bytes| text(bytes).trim().to_string()),
            engine_stdout,
            fed,
            feeds: feeds.is_dir().then_some(feeds),
        })
    }
}

/// The feeds recorded in the folder `feeds` (a fed run's, or one testcase's):
/// each input's name and its file in the folder; none where nothing was recorded.
pub fn fed_in(feeds: &Path) -> Result<Vec<(String, String)>> {
    match input_files::read_if_present(&feeds.join(INPUTS), &input_files::CHILD_RECORD)? {
        Some(bytes) => serde_json::from_slice(&bytes).context("the record of the feeds is damaged"),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However long the engine printed on stdout, the record keeps its first
    /// and last `KEPT_HALF` bytes, which the parent reads back (a record of
    /// every byte was refused over 1 MiB, and the reproducer then not written).
    #[test]
    fn the_engines_stdout_is_kept_at_both_ends() {
        let dir = tempfile::tempdir().unwrap();
        let printed: Vec<u8> = (0..3 * KEPT_HALF + 12345).map(|at| b'a' + (at % 26) as u8).collect();
        *lock() = Some((dir.path().to_path_buf(), dir.path().to_path_buf()));
        for piece in printed.chunks(KEPT_HALF / 3 + 7) {
            engine_stdout(std::str::from_utf8(piece).unwrap());
        }
        *lock() = None;
        let kept = ChildRecord::read(dir.path()).unwrap().engine_stdout.unwrap();
        let left_out = printed.len() - 2 * KEPT_HALF;
        let expected = format!(
            "{}\n[... {left_out} bytes left out ...]\n{}",
            std::str::from_utf8(&printed[..KEPT_HALF]).unwrap(),
            std::str::from_utf8(&printed[printed.len() - KEPT_HALF..]).unwrap()
        );
        assert!(kept == expected, "{} bytes kept", kept.len());
        let short = tempfile::tempdir().unwrap();
        append_kept(short.path(), b"AssertEqual: err=0\n").unwrap();
        append_kept(short.path(), b"again\n").unwrap();
        let kept = ChildRecord::read(short.path()).unwrap().engine_stdout.unwrap();
        assert_eq!(kept, "AssertEqual: err=0\nagain\n");
    }
}
