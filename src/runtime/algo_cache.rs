//! The algorithm cache: what fast-run's profiling found, kept in the cache
//! folder (`algo-cache/`), so that a later `--fast-run` with the same key
//! loads it and pays no profiling. One file per key: the runtime's files, the
//! CPU (model and flags) and the options that choose algorithms. The engine's
//! cache is keyed by each operator's parameters and shapes, so one file holds
//! the algorithms of every model profiled under that key.
//!
//! A file is `mge algorithm cache 1`, a line of JSON (`Header`: the key, the
//! SHA-256 of what follows, the models profiled into it), then the engine's
//! own cache (`engine::fast_run_file`). It is written whole (a staged file
//! renamed over it) under a lock, merged with what another process wrote
//! meanwhile. One that is damaged (its hash or framing) or foreign (another
//! key) is set aside under the lock, beside it, with a note, and the engine
//! profiles again; deleting the folder is always safe.
//!
//! Beside them, `HASH.tune`: tune's records of its searches over these
//! algorithms (`tune::record`), written the same way.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{home, trust, Located};
use crate::engine::fast_run_file::{check_framing, merge};
use crate::engine::{AlgoSearch, NetworkOptions};
use crate::input_files;

/// The folder under the cache folder.
pub const FOLDER: &str = "algo-cache";

/// `MGE_NO_ALGO_CACHE=1` opts out, as `--no-algo-cache` does.
const OPT_OUT: &str = "MGE_NO_ALGO_CACHE";

/// A file's first line.
const MAGIC: &[u8] = b"mge algorithm cache 1\n";

/// What a damaged or foreign file is renamed to, beside it: `NAME.set-aside`.
const SET_ASIDE: &str = "set-aside";

/// Whether `MGE_NO_ALGO_CACHE` opts out: set, and neither empty nor `0`.
pub fn opted_out_by_environment() -> bool {
    std::env::var_os(OPT_OUT).is_some_and(|value| !value.is_empty() && value != "0")
}

/// What one cache file serves: runs of this runtime, on this CPU, with these
/// options. Two runs with the same key may share what was profiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key(String);

impl Key {
    /// The key of networks with `options` on the runtime `located`, on this CPU.
    pub fn new(located: &Located, options: &NetworkOptions) -> Result<Key> {
        Ok(Key(format!(
            "runtime={};cpu={};{}",
            runtime_identity(located)?,
            cpu_identity(),
            choosing_options(options)
        )))
    }

    /// The file's name.
    fn file_name(&self) -> String {
        hashed_name(&self.0, "algo")
    }

    /// The key as text, for what is kept per key and more (tune's records).
    pub fn text(&self) -> &str {
        &self.0
    }
}

/// The options that change which algorithm profiling picks (the layouts
/// change the operators themselves, and so the engine's keys).
fn choosing_options(options: &NetworkOptions) -> String {
    let search = match options.algo_search {
        AlgoSearch::FullRun => "full-run",
        _ => "fast-run",
    };
    format!(
        "device={};threads={};cpu-inplace={};search={search};reproducible={};workspace-limit={};shared-batch-size={};binary-equal-between-batch={};weight-preprocess={}",
        options.device,
        options.threads.map_or("default".into(), |n| n.to_string()),
        options.cpu_inplace,
        options.reproducible,
        options.workspace_limit.map_or("none".into(), |n| n.to_string()),
        options.shared_batch_size.map_or("none".into(), |n| n.to_string()),
        options.binary_equal_between_batch,
        options.weight_preprocess,
    )
}

/// An install's record of its files (their SHA-256 each), hashed; else the
/// library's path, size and time of change.
fn runtime_identity(located: &Located) -> Result<String> {
    if let Some(install) = &located.install {
        let record = input_files::read(&install.join("files.json"), &input_files::RUNTIME_RECORD)?;
        return Ok(format!("install:{}", &hex_sha256(&record)[..16]));
    }
    let metadata =
        std::fs::metadata(&located.path).with_context(|| format!("cannot read {}", located.path.display()))?;
    let changed = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos());
    let path = located.path.canonicalize().unwrap_or_else(|_| located.path.clone());
    let text = format!("{}:{}:{changed}", path.display(), metadata.len());
    Ok(format!("library:{}", &hex_sha256(text.as_bytes())[..16]))
}

/// The CPU's model name and flags, from `/proc/cpuinfo`'s first processor, hashed.
fn cpu_identity() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|line| line.split(':').next().is_some_and(|key| key.trim() == name))
            .and_then(|line| line.split_once(':'))
            .map_or("", |(_, value)| value.trim())
            .to_string()
    };
    let text = format!("{}|{}", field("model name"), field("flags"));
    hex_sha256(text.as_bytes())[..16].to_string()
}

/// A model file's digest, from which `model_identity` names it.
pub fn model_digest(bytes: &[u8]) -> String {
    hex_sha256(bytes)
}

/// Which model a record is of: its file (`model_digest`), and the options
/// that change its operators (and so what profiling covers), hashed.
pub fn model_identity(digest: &str, options: &NetworkOptions) -> String {
    let text = format!(
        "{digest};layout={:?};layout-transform={};graph-opt-level={:?};fuse-preprocess={}",
        options.layout, options.layout_transform, options.graph_opt_level, options.fuse_preprocess
    );
    hex_sha256(text.as_bytes())[..16].to_string()
}

/// A file's name for a key: the key's hash, so that any key makes a plain name.
fn hashed_name(key: &str, extension: &str) -> String {
    format!("{}.{extension}", &hex_sha256(key.as_bytes())[..16])
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What a file says of itself, on its second line.
#[derive(Serialize, Deserialize)]
struct Header {
    key: String,
    /// Of the engine's cache that follows.
    sha256: String,
    /// The models profiled into it, by `model_identity`.
    #[serde(default)]
    models: BTreeMap<String, ModelRecord>,
}

/// What profiling a model cost on this machine: what `tune` estimates
/// fast-run's cost from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// Fast-run's profiling, where it was measured apart (`run`, `profile`).
    pub profiling_s: Option<f64>,
    /// The model's median run then.
    pub forward_ms: Option<f64>,
}

/// What the cache holds for a key.
pub struct Held {
    /// The engine's cache, checked.
    pub engine_cache: Vec<u8>,
    pub models: BTreeMap<String, ModelRecord>,
}

/// What reading a key's file found.
pub enum Found {
    /// No file: nothing profiled yet.
    Nothing,
    Held(Held),
    /// A damaged or foreign file, set aside: the note that says so.
    SetAside(String),
}

/// The algorithm caches of a cache folder.
pub struct AlgoCache {
    home: PathBuf,
    dir: PathBuf,
}

impl AlgoCache {
    /// The cache folder's (`MGE_HOME`, else the user's cache folder).
    pub fn at_home() -> Result<AlgoCache> {
        Ok(AlgoCache::in_home(home()?))
    }

    /// The algorithm caches of the cache folder `home`.
    pub fn in_home(home: PathBuf) -> AlgoCache {
        AlgoCache {
            dir: home.join(FOLDER),
            home,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn file(&self, key: &Key) -> PathBuf {
        self.dir.join(key.file_name())
    }

    /// The files and their bytes (what `runtime info` shows); none without the folder.
    pub fn usage(&self) -> (usize, u64) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return (0, 0);
        };
        entries
            .flatten()
            .filter_map(|entry| entry.metadata().ok().filter(|metadata| metadata.is_file()))
            .filter(|metadata| metadata.len() > 0)
            .fold((0, 0), |(files, bytes), metadata| (files + 1, bytes + metadata.len()))
    }

    /// What the cache holds for `key`, where it holds a sound file: looked
    /// at, never set aside (`tune`'s estimates; a run sets aside).
    pub fn held(&self, key: &Key) -> Option<Held> {
        let bytes = self.kept(&self.file(key), &input_files::FAST_RUN_CACHE).ok()??;
        parse(&bytes, key).ok()
    }

    /// The bytes of `file` in the folder, where there is one, read only
    /// where no other user could have changed it.
    fn kept(&self, file: &Path, kind: &input_files::Kind) -> Result<Option<Vec<u8>>> {
        if std::fs::symlink_metadata(file).is_err() {
            return Ok(None);
        }
        trust::ensure_kept_path_only_ours(&self.home, file)?;
        input_files::read_if_present(file, kind)
    }

    /// What the cache holds for `key`; a damaged or foreign file is set
    /// aside (under the lock, should another process have replaced it meanwhile).
    pub fn read(&self, key: &Key) -> Result<Found> {
        let file = self.file(key);
        let Some(bytes) = self.kept(&file, &input_files::FAST_RUN_CACHE)? else {
            return Ok(Found::Nothing);
        };
        match parse(&bytes, key) {
            Ok(held) => Ok(Found::Held(held)),
            Err(_) => {
                let _lock = self.lock()?;
                let Some(bytes) = input_files::read_if_present(&file, &input_files::FAST_RUN_CACHE)? else {
                    return Ok(Found::Nothing);
                };
                let why = match parse(&bytes, key) {
                    Ok(held) => return Ok(Found::Held(held)),
                    Err(why) => why,
                };
                let aside = file.with_extension(format!("algo.{SET_ASIDE}"));
                std::fs::rename(&file, &aside).with_context(|| format!("cannot set {} aside", file.display()))?;
                Ok(Found::SetAside(format!(
                    "the algorithm cache {} is {why:#}: set aside as {}; fast-run profiles again",
                    file.display(),
                    aside.display()
                )))
            }
        }
    }

    /// Keeps `engine_cache` (what the engine dumped) for `key`, with what
    /// another process kept meanwhile, and the record of `model`: written
    /// whole, under the lock.
    pub fn write(&self, key: &Key, engine_cache: &[u8], model: Option<(String, ModelRecord)>) -> Result<()> {
        check_framing(engine_cache).context("the engine's algorithm cache")?;
        let _lock = self.lock()?;
        let file = self.file(key);
        let kept = input_files::read_if_present(&file, &input_files::FAST_RUN_CACHE)?
            .and_then(|bytes| parse(&bytes, key).ok());
        let (engine_cache, mut models) = match kept {
            Some(held) => (merge(&held.engine_cache, engine_cache)?, held.models),
            None => (engine_cache.to_vec(), BTreeMap::new()),
        };
        if let Some((model, record)) = model {
            let known = models.entry(model).or_default();
            known.profiling_s = record.profiling_s.or(known.profiling_s);
            known.forward_ms = record.forward_ms.or(known.forward_ms);
        }
        let header = Header {
            key: key.0.clone(),
            sha256: hex_sha256(&engine_cache),
            models,
        };
        let mut bytes = MAGIC.to_vec();
        serde_json::to_writer(&mut bytes, &header)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&engine_cache);
        self.write_whole(&file, &bytes)
    }

    /// The file of tune's record under `key` (any text).
    fn search_record_file(&self, key: &str) -> PathBuf {
        self.dir.join(hashed_name(key, "tune"))
    }

    /// The bytes of tune's record under `key`, where there is one (`tune::record` reads them).
    pub fn search_record(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.kept(&self.search_record_file(key), &input_files::SEARCH_RECORD)
    }

    /// Keeps tune's record under `key`, in place of any before: written whole, under the lock.
    pub fn keep_search_record(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let _lock = self.lock()?;
        self.write_whole(&self.search_record_file(key), bytes)
    }

    /// Writes `file` whole: a staged file in the folder renamed over it. Under the lock.
    fn write_whole(&self, file: &Path, bytes: &[u8]) -> Result<()> {
        let mut staged = tempfile::Builder::new()
            .prefix(".staged-")
            .tempfile_in(&self.dir)
            .with_context(|| format!("cannot write into {}", self.dir.display()))?;
        staged
            .write_all(bytes)
            .and_then(|()| staged.as_file().sync_all())
            .with_context(|| format!("cannot write {}", file.display()))?;
        staged
            .persist(file)
            .with_context(|| format!("cannot write {}", file.display()))?;
        Ok(())
    }

    /// The folder's lock, made (the folder too, the user's alone) where missing.
    fn lock(&self) -> Result<File> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        trust::ensure_kept_path_only_ours(&self.home, &self.dir)?;
        let path = self.dir.join("lock");
        let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(file)
    }
}

/// A file's contents, checked against `key`: damaged (its first line, its
/// header, its hash, its framing) or foreign (another key) is an error that says which.
fn parse(bytes: &[u8], key: &Key) -> Result<Held> {
    let Some(rest) = bytes.strip_prefix(MAGIC) else {
        bail!("damaged: it does not start as mge writes one");
    };
    let Some(end) = rest.iter().position(|byte| *byte == b'\n') else {
        bail!("damaged: its header is cut short");
    };
    let header: Header =
        serde_json::from_slice(&rest[..end]).map_err(|_| anyhow::anyhow!("damaged: its header is not JSON"))?;
    if header.key != key.0 {
        bail!("foreign: written for another runtime, CPU or options");
    }
    let engine_cache = &rest[end + 1..];
    if hex_sha256(engine_cache) != header.sha256 {
        bail!("damaged: its contents differ from what was written (SHA-256)");
    }
    check_framing(engine_cache).map_err(|why| anyhow::anyhow!("damaged: {why}"))?;
    Ok(Held {
        engine_cache: engine_cache.to_vec(),
        models: header.models,
    })
}

#[cfg(test)]
mod tests;
