//! Fast-run paid once: a run that profiles algorithms (`--fast-run`,
//! `--full-run`) without a cache file of the user's reads what earlier runs
//! profiled from the algorithm cache (`runtime::algo_cache`) and keeps what
//! it profiled there. The engine reads it in this process, a supervised
//! child: from a staged copy of a file checked whole, never the file itself.

use std::io::Write;

use anyhow::{Context, Result};

use crate::engine::{AlgoChoices, AlgoSearch, Lite, NetworkOptions};
use crate::input_files;
use crate::model::ModelFile;
use crate::packed_options::Carried;
use crate::runtime::algo_cache::{
    model_digest, model_identity, opted_out_by_environment, AlgoCache, Found, Key, ModelRecord,
};
use crate::runtime::{self};
use crate::settings::EngineSettings;
use crate::settings::Global;

/// The algorithm cache a network's runtime was given.
pub struct InUse {
    cache: AlgoCache,
    key: Key,
    /// What the engine reads and profiles into: a copy in this process's scratch.
    staged: tempfile::NamedTempFile,
    /// The model (with the options that change its operators), and whether
    /// the cache held its record already.
    model: String,
    known: bool,
}

/// Whether the algorithm cache serves a network with `options`: it profiles,
/// the user named no cache file, the model carries none, nothing opted out.
fn serves(engine: &EngineSettings, model: &ModelFile, options: &NetworkOptions) -> Result<bool> {
    Ok(matches!(options.algo_search, AlgoSearch::FastRun | AlgoSearch::FullRun)
        && engine.fast_run_cache().is_none()
        && !engine.no_algo_cache()
        && !opted_out_by_environment()
        && Carried::of(model)?.fast_run_cache.is_none())
}

/// Gives the engine the algorithm cache's algorithms for `options`, where
/// it serves them: a damaged or foreign file is set aside with a note, and
/// one the cache folder cannot give is noted; either way fast-run profiles.
pub fn open(
    lite: &Lite,
    engine: &EngineSettings,
    model: &ModelFile,
    options: &NetworkOptions,
    global: &Global,
) -> Result<Option<InUse>> {
    if !serves(engine, model, options)? {
        return Ok(None);
    }
    let located = runtime::find(&global.runtime)?;
    let key = Key::new(&located, options)?;
    let cache = AlgoCache::at_home()?;
    let found = match cache.read(&key) {
        Ok(found) => found,
        Err(err) => {
            global.note(format!("the algorithm cache is not used: {err:#}"));
            return Ok(None);
        }
    };
    let model = model_identity(&model_digest(model.bytes()), options);
    let (engine_cache, known) = match found {
        Found::Held(held) => {
            let known = held.models.contains_key(&model);
            (held.engine_cache, known)
        }
        Found::SetAside(note) => {
            global.note(note);
            (vec![0; 4], false)
        }
        // An empty cache: four zero bytes.
        Found::Nothing => (vec![0; 4], false),
    };
    let mut staged = tempfile::NamedTempFile::new().context("cannot stage the algorithm cache")?;
    staged
        .write_all(&engine_cache)
        .context("cannot stage the algorithm cache")?;
    lite.use_algo_cache(staged.path())?;
    Ok(Some(InUse {
        cache,
        key,
        staged,
        model,
        known,
    }))
}

impl InUse {
    /// Keeps what the engine profiled (when it profiled, or the cache had no
    /// record of the model) with `record`, what the profiling cost. A cache
    /// that cannot be written costs the next run its profiling: a warning,
    /// not a failure.
    pub fn keep(&self, lite: &Lite, choices: Option<AlgoChoices>, record: ModelRecord, global: &Global) {
        if self.known && choices.is_some_and(|choices| choices.profiled == 0) {
            return;
        }
        let kept = lite
            .dump_algo_cache(self.staged.path())
            .and_then(|()| input_files::read(self.staged.path(), &input_files::FAST_RUN_CACHE))
            .and_then(|dumped| self.cache.write(&self.key, &dumped, Some((self.model.clone(), record))));
        if let Err(err) = kept {
            global.warn(format!(
                "fast-run's algorithms are not kept in the algorithm cache {}: {err:#}",
                self.cache.dir().display()
            ));
        }
    }
}
