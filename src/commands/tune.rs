//! `mge tune`: the fastest engine options for a model on this machine that
//! keep its outputs, found by trying them in supervised processes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{SavedOptions, TuneArgs};
use crate::input_files;
use crate::loading::read_model;
use crate::mge_command::MgeCommand;
use crate::model::ModelFile;
use crate::options::EngineOption;
use crate::output_files::{claim_file, write_atomically};
use crate::packed_options::{self, Carried};
use crate::report::made_by::Making;
use crate::report::print;
use crate::report::progress::TuneProgress;
use crate::report::tune::TuneReport;
use crate::runtime::algo_cache::{model_digest, opted_out_by_environment, AlgoCache, Key};
use crate::runtime::{self, Located};
use crate::settings::Global;
use crate::settings::{comparison_rules, EngineSettings, ModelSettings};
use crate::supervise::Scratch;
use crate::tune::candidate::singles;
use crate::tune::record::{self, RecordedSearch, SearchRecord};
use crate::tune::trial::{AlgoCacheView, Trials};
use crate::tune::Tuning;
use crate::tune::{tune as search, TuneOptions};

/// Warm-up runs of each candidate: enough for fast-run caches and allocators to settle.
const WARMUP: usize = 3;

/// What `mge tune` was asked, turned once from `TuneArgs`.
pub struct TuneSettings {
    /// The baseline: the engine options given are kept fixed.
    model: ModelSettings,
    /// The budget, and how a candidate's outputs are held against the baseline's.
    search: TuneOptions,
    /// `--search-again`: no record of an earlier search is used.
    search_again: bool,
    json: bool,
    /// `--save FILE`.
    save: Option<PathBuf>,
    /// `--save-model OUT.mge`.
    save_model: Option<PathBuf>,
}

impl TuneSettings {
    pub fn from_args(args: TuneArgs, global: &Global) -> Result<TuneSettings> {
        Ok(TuneSettings {
            model: ModelSettings::from_args(&args.model, global)?,
            search: TuneOptions {
                budget: args.budget,
                given: args.model.engine.given.clone(),
                rules: comparison_rules(&args.comparison, None)?,
            },
            search_again: args.search_again,
            json: args.json,
            save: args.save,
            save_model: args.save_model,
        })
    }
}

pub fn tune(settings: TuneSettings, global: &Global) -> Result<()> {
    let model = &settings.model;
    let device = model.engine.network.device;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let singles = singles(&model.engine.given, device, cores);
    claim_outputs(&settings, &singles)?;
    let opened = read_tunable_model(&settings)?;
    let located = runtime::locate(&global.runtime)?;
    // Here, in one line, rather than in every candidate.
    runtime::ensure_runs_on(&located, device)?;
    // A scratch folder as the supervisor's: the next mge removes it should this one be killed.
    let scratch = Scratch::new()?;
    let baseline = baseline_command(model, &opened);
    let mut trials = Trials {
        baseline: baseline.clone().runtime(Ok(&located)).verbose(false),
        warmup: WARMUP,
        algo_cache: algo_cache_view(&model.engine, &opened, &located)?,
        fast_run_cache: model.engine.fast_run_cache().map(Path::to_path_buf),
        scratch: scratch.path().to_path_buf(),
        count: 0,
        notes: Vec::new(),
    };
    // A record of the search is kept beside the algorithms its fast-run candidates used.
    let record_key = match &trials.algo_cache {
        Some(view) => Some(search_record_key(view, &baseline, &singles, &settings.search)?),
        None => None,
    };
    let recorded = match (&trials.algo_cache, &record_key) {
        (Some(view), Some(key)) if !settings.search_again => read_record(&view.cache, key, &singles, global),
        _ => None,
    };
    // The singles, and about as many combinations of the winners at most.
    let mut progress = TuneProgress::new(singles.len() as u64 * 3 / 2, global.quiet);
    let tuning = search(&mut trials, singles.clone(), recorded, &settings.search, &mut progress)?;
    drop(progress);
    for note in &trials.notes {
        global.note(note);
    }
    if let (Some(view), Some(key)) = (&trials.algo_cache, &record_key) {
        keep_record(&view.cache, key, &tuning, &singles, global);
    }
    if let Some(file) = &settings.save {
        save(file, &tuning, &model.engine, &trials)?;
    }
    if let Some(file) = &settings.save_model {
        save_model(file, &opened, &tuning, &model.engine, &trials, global)?;
    }
    let report = TuneReport::new(&tuning, &baseline);
    print(
        &report,
        settings.json,
        &Making::new(&global.runtime, None, &model.engine.given),
    )
}

/// Claims the files `--save` and `--save-model` will write, before the search.
fn claim_outputs(settings: &TuneSettings, singles: &[EngineOption]) -> Result<()> {
    if let Some(file) = &settings.save {
        claim_file("--save", file).with_context(|| format!("--save {}", file.display()))?;
        // Written only should fast-run win, but checked now: the search may take minutes.
        if settings.model.engine.fast_run_cache().is_none() && singles.contains(&EngineOption::FastRun) {
            let cache = saved_cache(file);
            claim_file("--save's fast-run cache", &cache)
                .with_context(|| format!("--save {}: fast-run's cache {}", file.display(), cache.display()))?;
        }
    }
    if let Some(file) = &settings.save_model {
        claim_file("--save-model", file).with_context(|| format!("--save-model {}", file.display()))?;
    }
    Ok(())
}

/// The model file, read once: a model that cannot be read or tuned fails
/// here, in one line, not in every candidate.
fn read_tunable_model(settings: &TuneSettings) -> Result<ModelFile> {
    let model = &settings.model;
    let opened = read_model(&model.path, &model.engine)?;
    // So is a pack that carries an option no model may.
    Carried::of(&opened)?
        .by_mge()
        .with_context(|| model.path.display().to_string())?;
    if settings.save_model.is_some() {
        packed_options::ensure_packable(&opened)?;
    }
    Ok(opened)
}

/// `mge run MODEL` with the user's feeds and fixed options: every candidate's start.
fn baseline_command(model: &ModelSettings, opened: &ModelFile) -> MgeCommand {
    let baseline = MgeCommand::run(&model.path)
        .feeds(&model.feeds.given, &model.feeds.options)
        .engine(&model.engine.given);
    match opened.is_container() {
        // Tuned on feeds: the container's model with its real outputs, not its testcases.
        true => baseline.no_testcase(),
        false => baseline,
    }
}

/// Where fast-run candidates keep their algorithms: the algorithm cache,
/// where every later `--fast-run` finds them, unless the user gave a
/// fast-run cache or opted out of it.
fn algo_cache_view(engine: &EngineSettings, opened: &ModelFile, located: &Located) -> Result<Option<AlgoCacheView>> {
    if engine.fast_run_cache().is_some() || engine.no_algo_cache() || opted_out_by_environment() {
        return Ok(None);
    }
    Ok(Some(AlgoCacheView {
        cache: AlgoCache::at_home()?,
        options: engine.network.clone(),
        model: model_digest(opened.bytes()),
        located: located.clone(),
        looked_at: Vec::new(),
    }))
}

/// The key of this search's record: the algorithm cache's key, the model,
/// the baseline, the candidates, the rules and the budget.
fn search_record_key(
    view: &AlgoCacheView,
    baseline: &MgeCommand,
    singles: &[EngineOption],
    search: &TuneOptions,
) -> Result<String> {
    Ok(record::key(
        Key::new(&view.located, &view.options)?.text(),
        &view.model,
        &baseline.shell_line(),
        singles,
        &search.rules.describe(),
        search.budget,
    ))
}

/// Keeps the record of `tuning` under `key` for a later tune; one that
/// cannot be kept is said in a note.
fn keep_record(cache: &AlgoCache, key: &str, tuning: &Tuning, singles: &[EngineOption], global: &Global) {
    if let Some(record) = SearchRecord::of(tuning, singles, key.to_string()) {
        if let Err(err) = cache.keep_search_record(key, &record.to_bytes()) {
            global.note(format!("the search's record is not kept: {err:#}"));
        }
    }
}

/// The record of an earlier search under `key`; a damaged or foreign one is
/// said in a note, and the search measures anew (and replaces it).
fn read_record(cache: &AlgoCache, key: &str, singles: &[EngineOption], global: &Global) -> Option<RecordedSearch> {
    let bytes = match cache.search_record(key) {
        Ok(bytes) => bytes?,
        Err(err) => {
            global.note(format!("the record of tune's last search is not read: {err:#}"));
            return None;
        }
    };
    match SearchRecord::read(&bytes, key, singles) {
        Ok(recorded) => Some(recorded),
        Err(why) => {
            global.note(format!(
                "the record of tune's last search of this model is {why}: every candidate is measured anew"
            ));
            None
        }
    }
}

/// Writes the model packed with the winner's options and the fast-run cache
/// it used (see `packed_options::save_model`), and says what Lite cannot apply.
fn save_model(
    file: &Path,
    model: &ModelFile,
    tuning: &Tuning,
    user: &EngineSettings,
    trials: &Trials,
    global: &Global,
) -> Result<()> {
    let best = &tuning.best_row().candidate;
    let options: Vec<EngineOption> = user.given.iter().chain(&best.0).cloned().collect();
    let cache = match user.fast_run_cache() {
        Some(cache) => Some(cache.to_path_buf()),
        None if best.has(&EngineOption::FastRun) => Some(trials.fast_run_cache_of(best)?),
        None => None,
    };
    let by_mge = packed_options::save_model(file, model, &options, cache.as_deref())?;
    if !by_mge.is_empty() {
        let words: Vec<String> = by_mge.iter().flat_map(EngineOption::args).collect();
        global.note(format!(
            "{}: Lite's info cannot hold {}; it is kept in the info's extra_info, which `mge run` applies and MegEngine Lite ignores",
            file.display(),
            words.join(" ")
        ));
    }
    Ok(())
}

/// Where `--save FILE` puts fast-run's cache: `FILE.cache`, beside it.
fn saved_cache(file: &Path) -> PathBuf {
    file.with_file_name(format!(
        "{}.cache",
        file.file_name().unwrap_or_default().to_string_lossy()
    ))
}

/// Writes the winner's options (the user's fixed ones included) for `--options FILE`,
/// and fast-run's cache beside it when fast-run won, so that no run profiles again.
fn save(file: &Path, tuning: &Tuning, user: &EngineSettings, trials: &Trials) -> Result<()> {
    let best = &tuning.best_row().candidate;
    let mut args: Vec<String> = user.given.iter().flat_map(EngineOption::args).collect();
    args.extend(best.args());
    let mut fast_run_cache = None;
    if best.has(&EngineOption::FastRun) && user.fast_run_cache().is_none() {
        let target = saved_cache(file);
        let cache = input_files::read(&trials.fast_run_cache_of(best)?, &input_files::FAST_RUN_CACHE)?;
        write_atomically(&target, &cache).context("--save")?;
        fast_run_cache = target.file_name().map(|name| name.to_string_lossy().into_owned());
    }
    let saved = SavedOptions { args, fast_run_cache };
    write_atomically(file, (serde_json::to_string_pretty(&saved)? + "\n").as_bytes()).context("--save")
}
