//! The one way a command gets a model ready to run, from its settings
//! (`settings`): `prepare` opens the model, decides what feeds its inputs
//! (`Feeding`), lets the command adjust the network options (its one hook),
//! and loads the model into the engine; `Prepared::feeds` makes the feeds
//! and `Prepared::finish` saves what the engine learned.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

pub mod fast_run;

use crate::engine::{silence_stdout, AlgoSearch, Device, Lite, NetworkOptions, StdoutSilenced};
use crate::feeds::{self, Feed, FeedSpec};
use crate::input_files;
use crate::model::{Method, ModelFile};
use crate::options::EngineOption;
use crate::output_files::{staged_beside, write_atomically};
use crate::packed_options::Carried;
use crate::runner::testcase::testcase_feeds;
use crate::runner::{profile_algorithms, Outputs, RunObserver, RunPlan, Runs, Session};
use crate::runtime;
use crate::runtime::algo_cache::ModelRecord;
use crate::settings::Global;
use crate::settings::{EngineSettings, ModelSettings};
use crate::supervise::child::announce;
use crate::supervise::{repro_record, Phase};
use crate::tensor::format_shape;
use crate::text::{part_of, quoted_list};

/// What a container's embedded testcases are for when no feeds are given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Testcases {
    /// Run every one, checked by the model's own assertions (`run`).
    Run,
    /// Feed the first one's inputs to the model with its real outputs (`profile`, `dump`).
    FeedFirst,
    /// `--no-testcase`: feeds as for a plain model.
    Ignore,
}

impl Testcases {
    /// `use_them`, unless `--no-testcase` said otherwise.
    pub fn unless(no_testcase: bool, use_them: Testcases) -> Testcases {
        if no_testcase {
            Testcases::Ignore
        } else {
            use_them
        }
    }
}

/// What the model's inputs get: decided once, by `prepare`, from the user's
/// specs, the command's use of testcases and the model; made into feeds by
/// `Prepared::feeds` (or, for `run`'s testcases, by `runner::testcase`).
/// The two are the one place that decides what feeds each input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feeding {
    /// The user's specs (`-i`), which must feed every input.
    Specs,
    /// No specs: the default `#rand` of every input (`feeds::default_spec`).
    Defaults,
    /// No specs, and a container's embedded testcases stand in for feeds
    /// (see `Testcases`): `run` runs every one, the others feed the first.
    Testcases,
}

impl Feeding {
    fn decide(testcases: Testcases, specs: &[FeedSpec], model: &ModelFile) -> Feeding {
        if !specs.is_empty() {
            Feeding::Specs
        } else if testcases != Testcases::Ignore && model.is_container() {
            Feeding::Testcases
        } else {
            Feeding::Defaults
        }
    }
}

/// The model as `prepare` opened it, for the command's hook.
pub struct Opened {
    pub model: ModelFile,
    pub feeding: Feeding,
}

/// A model loaded into the engine, ready to be fed and run.
pub struct Prepared<'a> {
    /// Before `engine_output`: the network goes while the engine's output is still kept off stdout.
    pub session: Session,
    engine_output: StdoutSilenced,
    pub lite: Lite,
    pub model: ModelFile,
    pub feeding: Feeding,
    /// The network options after the command's hook.
    pub options: NetworkOptions,
    /// When the engine began to load the model, and when it was done.
    pub loading: Instant,
    pub loaded: Instant,
    /// Reading the model file and loading it into the engine, in milliseconds.
    pub load_ms: f64,
    settings: &'a ModelSettings,
    /// The settings' engine options with what the model carries.
    engine: EngineSettings,
    ready: Ready,
    /// What fast-run's profiling cost, for the algorithm cache's record.
    profiling: ModelRecord,
    global: &'a Global,
}

/// Finds the engine's library, makes sure it runs on `device`, and loads it,
/// telling a supervising parent, which then knows a failure (or a driver that
/// does not answer) to be the library's. Its version is recorded for a
/// reproducer (`supervise::repro_record`).
pub fn load_runtime(global: &Global, device: Device) -> Result<Lite> {
    announce(Phase::Runtime);
    let lite = runtime::load(&global.runtime, device, global.verbose)?;
    if let Ok(version) = lite.version() {
        repro_record::runtime_version(version);
    }
    Ok(lite)
}

/// What `ready_runtime` set up.
#[must_use = "the staged caches the engine was given are removed with it"]
pub struct Ready {
    /// Whether the engine's algorithm choices are counted (see `Lite::watch_algorithm_choices`).
    watching: bool,
    /// TensorRT's cache as the engine reads and writes it (a staged copy), and the user's file.
    tensorrt_cache: Option<(tempfile::NamedTempFile, std::path::PathBuf)>,
    /// The algorithm cache fast-run reads and keeps what it profiled in.
    algo_cache: Option<fast_run::InUse>,
}

impl Ready {
    /// Keeps what fast-run profiled in the algorithm cache, with what it
    /// cost (`record`), where the runtime was given it.
    pub fn keep_algorithms(&self, lite: &Lite, record: ModelRecord, global: &Global) {
        if let Some(in_use) = &self.algo_cache {
            let choices = self.watching.then(|| lite.algorithm_choices());
            in_use.keep(lite, choices, record, global);
        }
    }
}

/// Opens the model of `settings`, lets `adjust` (the command's hook) check
/// what it must before the engine starts and change the network options, then
/// loads the model into the engine. Returns the loaded model with what `adjust` returned.
pub fn prepare<'a, T>(
    settings: &'a ModelSettings,
    testcases: Testcases,
    global: &'a Global,
    adjust: impl FnOnce(&Opened, &mut NetworkOptions) -> Result<T>,
) -> Result<(Prepared<'a>, T)> {
    let reading = Instant::now();
    let mut model = read_model(&settings.path, &settings.engine)?;
    if !settings.extra_outputs.is_empty() {
        model.add_outputs(&settings.extra_outputs).context("--extra-output")?;
    }
    let read = reading.elapsed();
    let engine = with_carried(&settings.engine, &model, &settings.path, global)?;
    let opened = Opened {
        feeding: Feeding::decide(testcases, &settings.feeds.specs, &model),
        model,
    };
    let mut options = engine.network.clone();
    let adjusted = adjust(&opened, &mut options)?;
    // Before the engine loads, a GPU it cannot run on is refused (the driver's
    // view); after, one the engine does not see (a build without CUDA).
    let lite = load_runtime(global, options.device)?;
    lite.check_device(options.device)?;
    let ready = ready_runtime(&lite, &engine, &opened.model, &options, global)?;
    let engine_output = silence_stdout(global.verbose);
    let outputs = match (testcases, opened.feeding) {
        (Testcases::Run, Feeding::Testcases) => Outputs::Asserted,
        _ => Outputs::Real,
    };
    let loading = Instant::now();
    let session = Session::load(&lite, &opened.model, outputs, &options)?;
    let loaded = Instant::now();
    let prepared = Prepared {
        session,
        engine_output,
        lite,
        model: opened.model,
        feeding: opened.feeding,
        options,
        loading,
        loaded,
        load_ms: (read + (loaded - loading)).as_secs_f64() * 1e3,
        settings,
        engine,
        ready,
        profiling: ModelRecord::default(),
        global,
    };
    Ok((prepared, adjusted))
}

/// Reads the model at `path`, a bare encrypted one with the method `engine` names.
pub fn read_model(path: &Path, engine: &EngineSettings) -> Result<ModelFile> {
    let method = engine.given.iter().find_map(|option| match option {
        EngineOption::ModelDecryption(method) => Some(*method),
        _ => None,
    });
    ModelFile::read(path, method)
}

/// `engine` with the options `model` carries (see `packed_options`): those of its
/// info, which the engine applies over the command line's (a warning says
/// which it replaces), and `mge`'s own from its `extra_info`, where the
/// command line gives none that clashes; a pack that carries an option no
/// model may (one that names a file, a library or a cache) is refused. An
/// embedded fast-run cache is read as `--fast-run-cache` alone reads one. A
/// note says what was applied.
pub fn with_carried(
    engine: &EngineSettings,
    model: &ModelFile,
    path: &Path,
    global: &Global,
) -> Result<EngineSettings> {
    let carried = Carried::of(model)?;
    if carried.is_empty() {
        return Ok(engine.clone());
    }
    let overrides = |a: &EngineOption, b: &EngineOption| {
        std::mem::discriminant(a) == std::mem::discriminant(b) || a.clashes_with(b)
    };
    let mut given = Vec::new();
    for option in &engine.given {
        match carried.by_lite.iter().find(|by_lite| overrides(by_lite, option)) {
            Some(by_lite) if by_lite != option => global.warn(format!(
                "{}'s info sets {}, which the engine applies over {}",
                path.display(),
                by_lite.args().join(" "),
                option.args().join(" ")
            )),
            Some(_) => {}
            None => given.push(option.clone()),
        }
    }
    given.extend(carried.by_lite.iter().cloned());
    let by_mge = carried.by_mge().with_context(|| path.display().to_string())?;
    let (applied, left_out): (Vec<_>, Vec<_>) = by_mge
        .into_iter()
        .partition(|option| !given.iter().any(|given| overrides(given, option)));
    given.extend(applied.iter().cloned());
    if carried.fast_run_cache.is_some() && engine.fast_run_cache().is_some() {
        bail!(
            "{} carries its own fast-run cache, which the engine installs in place of --fast-run-cache: drop the option",
            path.display()
        );
    }
    let mut merged = EngineSettings::from_given(given, global)?;
    if carried.fast_run_cache.is_some() && merged.network.algo_search == AlgoSearch::Heuristic {
        merged.network.algo_search = AlgoSearch::CacheOnly;
    }
    let words = |options: &[EngineOption]| {
        options
            .iter()
            .flat_map(EngineOption::args)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut applies = Vec::new();
    if !carried.by_lite.is_empty() || !carried.unnamed.is_empty() {
        let all = [words(&carried.by_lite), carried.unnamed.join(" ")].join(" ");
        applies.push(format!("{} (its info, applied by the engine)", all.trim()));
    }
    if let Some(method) = &carried.encrypted_info {
        applies.push(format!(
            "an info encrypted with {method} (applied by the engine, unseen by mge)"
        ));
    }
    if !applied.is_empty() {
        applies.push(format!("{} (its extra_info, applied by mge)", words(&applied)));
    }
    if !left_out.is_empty() {
        applies.push(format!(
            "not {} (its extra_info; the command line's options win)",
            words(&left_out)
        ));
    }
    if let Some(bytes) = carried.fast_run_cache {
        applies.push(format!("a fast-run cache of {bytes} bytes"));
    }
    global.note(format!("{} carries {}", path.display(), applies.join("; ")));
    Ok(merged)
}

/// Readies the runtime for `model`: the extern operator libraries, the key of
/// the methods it is encrypted with, the fast-run (the user's file, else the
/// algorithm cache) and TensorRT caches.
pub fn ready_runtime(
    lite: &Lite,
    engine: &EngineSettings,
    model: &ModelFile,
    options: &NetworkOptions,
    global: &Global,
) -> Result<Ready> {
    for library in engine.c_opr_libs() {
        lite.load_extern_operators(library)
            .with_context(|| format!("--c-opr-lib {}", library.display()))?;
    }
    if let Some(key) = &engine.model_key {
        let methods = model.decryption_methods();
        if methods.is_empty() {
            bail!("--model-key: the model is not encrypted");
        }
        for method in methods {
            if let Some(known) = Method::from_name(method) {
                known.check_key(key).context("--model-key")?;
            }
            lite.set_decryption_key(method, key).context("--model-key")?;
        }
    }
    if let Some(cache) = engine.fast_run_cache() {
        lite.use_algo_cache(cache)?;
    }
    let algo_cache = fast_run::open(lite, engine, model, options, global)?;
    // The engine writes the cache where it read it: it gets a staged copy,
    // renamed over the user's file once written whole.
    let tensorrt_cache = match engine.tensorrt_cache() {
        Some(cache) => {
            let mut staged = staged_beside(cache).context("--tensorrt-cache")?;
            if let Some(bytes) = input_files::read_if_present(cache, &input_files::TENSORRT_CACHE)? {
                staged
                    .write_all(&bytes)
                    .with_context(|| format!("--tensorrt-cache: cannot stage {}", cache.display()))?;
            }
            lite.use_tensorrt_cache(staged.path())?;
            Some((staged, cache.to_path_buf()))
        }
        None => None,
    };
    Ok(Ready {
        watching: options.algo_search != AlgoSearch::Heuristic && lite.watch_algorithm_choices().is_some(),
        tensorrt_cache,
        algo_cache,
    })
}

impl Prepared<'_> {
    /// The feeds of the inputs, as `self.feeding` decided: the user's specs
    /// (which must feed every input), the first testcase's values, or each
    /// input's default `#rand` (a container without testcases gets these
    /// too); a note says where feeds the user did not give come from, and
    /// which values were converted.
    /// What it fed is recorded for a reproducer (`supervise::repro_record`).
    pub fn feeds(&self, global: &Global) -> Result<Vec<Feed>> {
        let feeds = self.resolve_feeds(global)?;
        repro_record::fed(&feeds);
        Ok(feeds)
    }

    fn resolve_feeds(&self, global: &Global) -> Result<Vec<Feed>> {
        let inputs = &self.session.inputs;
        let defaults: Vec<FeedSpec>;
        let specs = match (self.feeding, self.model.testcases().next()) {
            (Feeding::Testcases, Some(testcase)) => {
                global.note(format!(
                    "no --input given; feeding testcase 0 of {}",
                    self.settings.path.display()
                ));
                return testcase_feeds(&self.lite, testcase, &self.session, 0).context("testcase 0");
            }
            (Feeding::Specs, _) => &self.settings.feeds.specs,
            (Feeding::Defaults | Feeding::Testcases, _) => {
                defaults = inputs.iter().map(feeds::default_spec).collect();
                if !inputs.is_empty() {
                    let texts: Vec<&str> = defaults.iter().map(FeedSpec::text).collect();
                    global.note(format!("no --input given; feeding {}", texts.join(", ")));
                }
                &defaults
            }
        };
        let feeds = feeds::resolve(specs, inputs, &self.settings.feeds.options)?;
        for feed in &feeds {
            if let Some(stored) = feed.converted_from {
                global.note(format!(
                    "input '{}': {stored} values from '{}' converted to {}",
                    feed.name, feed.source, feed.tensor.dtype
                ));
            }
            let declared = inputs.iter().find(|input| input.name == feed.name);
            if let Some(declared) = declared.filter(|declared| declared.shape != feed.tensor.shape) {
                global.note(format!(
                    "input '{}': shape {} from '{}' differs from the model's {}; the engine reshapes the graph for it",
                    feed.name,
                    format_shape(&feed.tensor.shape),
                    feed.source,
                    format_shape(&declared.shape)
                ));
            }
        }
        let missing: Vec<&str> = inputs
            .iter()
            .filter(|input| !feeds.iter().any(|feed| feed.name == input.name))
            .map(|input| input.name.as_str())
            .collect();
        if !missing.is_empty() {
            bail!(
                "no feed for input {}: add -i NAME:SOURCE for each",
                quoted_list(&missing)
            );
        }
        Ok(feeds)
    }

    /// Warms up and times the runs of `plan` (see `Session::measure`), with a
    /// note when `--duration` stopped at the most timed runs one run keeps.
    pub fn measure(&mut self, plan: &RunPlan, observer: &mut impl RunObserver) -> Result<Runs> {
        let runs = self.session.measure(plan, observer)?;
        if plan.stopped_at_most(runs.timed_ms.len()) {
            self.global.note(format!(
                "--duration: stopped after {} timed runs, the most one run keeps",
                runs.timed_ms.len()
            ));
        }
        Ok(runs)
    }

    /// Fast-run's profiling (see `runner::profile_algorithms`): the run of a
    /// copy that profiled, in milliseconds; `None` where nothing was
    /// profiled, the algorithm cache having held every algorithm.
    pub fn profile_algorithms(&self, feeds: &[Feed]) -> Result<Option<f64>> {
        let run = profile_algorithms(&self.session, &self.lite, &self.options, feeds)?;
        let profiled = !self.ready.watching || self.lite.algorithm_choices().profiled > 0;
        Ok(run.filter(|_| profiled))
    }

    /// What fast-run's profiling cost (`timing_ms.profiling`, measured apart)
    /// beside the model's median run: kept in the algorithm cache's record,
    /// from which `tune` estimates fast-run's cost on this machine.
    pub fn profiled(&mut self, profiling_ms: Option<f64>, median_ms: f64) {
        self.profiling = ModelRecord {
            profiling_s: profiling_ms.map(|ms| ms / 1e3),
            forward_ms: Some(median_ms),
        };
    }

    /// Saves the caches the engine updated, says how the fast-run cache
    /// served, and lets the network go: the engine finishes its dumps then.
    /// Returns the runtime.
    pub fn finish(mut self) -> Result<Lite> {
        let choices = self.ready.watching.then(|| self.lite.algorithm_choices());
        let cache = self.engine.fast_run_cache();
        match self.options.algo_search {
            AlgoSearch::CacheOnly => {
                if let Some(choices) = choices {
                    let source = match cache {
                        Some(file) => file.display().to_string(),
                        None => "embedded in the model".to_string(),
                    };
                    self.global.note(format!(
                        "fast-run cache {source}: the algorithms of {} were not in it and came from the heuristic; nothing was profiled",
                        part_of(choices.not_in_cache, choices.chosen, "operator")
                    ));
                }
            }
            // Written only when something new was profiled.
            AlgoSearch::FastRun | AlgoSearch::FullRun => {
                if let Some(cache) = cache.filter(|_| choices.is_none_or(|choices| choices.profiled > 0)) {
                    save_algo_cache(&self.lite, cache)?;
                }
                self.ready.keep_algorithms(&self.lite, self.profiling, self.global);
            }
            AlgoSearch::Heuristic => {}
        }
        if let Some((staged, cache)) = self.ready.tensorrt_cache.take() {
            self.lite.dump_tensorrt_cache()?;
            staged
                .persist(&cache)
                .with_context(|| format!("--tensorrt-cache: cannot write {}", cache.display()))?;
        }
        let Prepared {
            session,
            engine_output,
            lite,
            ..
        } = self;
        drop(session);
        drop(engine_output);
        Ok(lite)
    }
}

/// Writes the engine's fast-run cache to `cache`. The engine writes it to a
/// temporary file first, so a failure leaves the previous cache intact.
fn save_algo_cache(lite: &Lite, cache: &Path) -> Result<()> {
    let dumped = tempfile::NamedTempFile::new().context("--fast-run-cache: cannot create a temporary file")?;
    lite.dump_algo_cache(dumped.path())?;
    let contents = input_files::read(dumped.path(), &input_files::FAST_RUN_CACHE)?;
    write_atomically(cache, &contents).context("--fast-run-cache")
}

/// Options under which the engine would pass every testcase unchecked.
pub fn refuse_unchecked_testcases(options: &NetworkOptions) -> Result<()> {
    if options.record_comp_seq == Some(2) {
        bail!("--record-comp-seq 2 disables the engine's AssertEqual, so testcases cannot be checked (use level 1, or --no-testcase with `mge run`)");
    }
    Ok(())
}
