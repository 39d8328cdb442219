//! The settings several commands share, turned once from their arguments
//! (ripgrep's low and high arguments): engine options checked and settled,
//! a model with its feeds, a plan of runs, comparison rules. Each command's
//! own settings (`RunSettings`, `DumpSettings`, ...) are built from these in
//! its module, by its `from_args`; clap's types go no further than those.

mod global;
pub mod models;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::cli::{ComparisonArgs, EngineArgs, FeedArgs, IterationArgs, ModelArgs, StatArg};
use crate::compare::{NamedMaxerr, Rules, Statistic, Tolerance};
use crate::engine::{available_cores, AlgoSearch, Device, NetworkOptions};
use crate::feeds::{self, FeedOptions, FeedSpec};
use crate::input_files;
use crate::options::{EngineOption, RuntimeOptions, TransformTarget};
use crate::output_files::claim_file;
use crate::runner::RunPlan;
use crate::runtime;

pub use global::Global;

/// A command's engine options, turned once from its arguments.
#[derive(Clone)]
pub struct EngineSettings {
    /// As given, in order: for the processes that run under them.
    pub given: Vec<EngineOption>,
    /// What the network is built with, pairings the engine would refuse settled.
    pub network: NetworkOptions,
    /// What the runtime takes besides the network: the caches, the key, extern operators.
    runtime: RuntimeOptions,
    /// `--model-key`, read.
    pub model_key: Option<Vec<u8>>,
}

impl EngineSettings {
    pub fn from_args(args: &EngineArgs, global: &Global) -> Result<EngineSettings> {
        EngineSettings::from_given(args.given.clone(), global)
    }

    /// The options `given`, checked: refused here in one line where the engine
    /// would only refuse them with an assertion, or (the sanity check that
    /// comp-seq recording excludes) turned off with a note.
    pub fn from_given(given: Vec<EngineOption>, global: &Global) -> Result<EngineSettings> {
        let mut network = NetworkOptions::default();
        let mut runtime = RuntimeOptions::default();
        for option in &given {
            option.apply(&mut network, &mut runtime);
        }
        let model_key = runtime.model_key.as_deref().map(read_model_key).transpose()?;
        for library in &runtime.c_opr_libs {
            if !library.exists() {
                bail!("--c-opr-lib {}: no such file", library.display());
            }
            runtime::ensure_whole_library(library, "--c-opr-lib")?;
        }
        settle_algo_search(&mut network, &runtime, &given)?;
        check_device(&network, &given)?;
        settle_first_run(&mut network, global)?;
        Ok(EngineSettings {
            given,
            network,
            runtime,
            model_key,
        })
    }

    /// Warns of more CPU worker threads than the machine has cores: the
    /// engine's workers spin while they wait, so the extra ones only take turns.
    pub fn warn_oversubscribed(&self, global: &Global) {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        if let Some(threads) = self.network.threads.filter(|&threads| threads > cores) {
            global.warn(format!(
                "--threads {threads} is more than the {cores} cores here: the engine's worker threads spin while they wait, so the extra ones slow it down"
            ));
        }
    }

    /// These settings and `option` (a command's own default).
    pub fn with(mut self, option: EngineOption) -> EngineSettings {
        option.apply(&mut self.network, &mut self.runtime);
        self.given.push(option);
        self
    }

    /// The fast-run cache the runtime reads before loading and updates after the runs.
    pub fn fast_run_cache(&self) -> Option<&Path> {
        self.runtime.fast_run_cache.as_deref()
    }

    /// `--no-algo-cache`: fast-run neither reads nor keeps the algorithm cache.
    pub fn no_algo_cache(&self) -> bool {
        self.runtime.no_algo_cache
    }

    /// Claims the caches the engine reads and the tool writes back: a fast-run
    /// cache only read is an input; one profiled into, and TensorRT's, are
    /// outputs, checked before any work (after the command's inputs).
    pub fn claim_files(&self) -> Result<()> {
        if let Some(cache) = self.fast_run_cache() {
            match self.network.algo_search {
                AlgoSearch::CacheOnly => input_files::claim(cache)?,
                _ => claim_file("--fast-run-cache", cache)
                    .with_context(|| format!("--fast-run-cache {}", cache.display()))?,
            }
        }
        if let Some(cache) = self.tensorrt_cache() {
            claim_file("--tensorrt-cache", cache).with_context(|| format!("--tensorrt-cache {}", cache.display()))?;
        }
        Ok(())
    }

    /// TensorRT's engine cache, read before loading and updated after the runs.
    pub fn tensorrt_cache(&self) -> Option<&Path> {
        self.runtime.tensorrt_cache.as_deref()
    }

    /// The extern operator libraries to load before the model.
    pub fn c_opr_libs(&self) -> impl Iterator<Item = &Path> {
        self.runtime.c_opr_libs.iter().map(PathBuf::as_path)
    }
}

/// `--fast-run-cache` alone reads a cache without profiling; the fast-run
/// settings need algorithms profiled or read.
fn settle_algo_search(network: &mut NetworkOptions, runtime: &RuntimeOptions, given: &[EngineOption]) -> Result<()> {
    if let Some(cache) = runtime
        .fast_run_cache
        .as_ref()
        .filter(|_| network.algo_search == AlgoSearch::Heuristic)
    {
        if !cache.is_file() {
            bail!(
                "--fast-run-cache {} alone only reads a cache, and there is none: add --fast-run (or --full-run) to profile into it",
                cache.display()
            );
        }
        network.algo_search = AlgoSearch::CacheOnly;
    }
    if network.algo_search == AlgoSearch::Heuristic {
        if let Some(option) = given.iter().find(|option| {
            matches!(
                option,
                EngineOption::FastRunSharedBatchSize(_) | EngineOption::BinaryEqualBetweenBatch
            )
        }) {
            bail!(
                "{} only matters where algorithms are profiled or read from a cache: add --fast-run, --full-run or --fast-run-cache FILE",
                option.flag_and_value().0
            );
        }
    }
    Ok(())
}

/// The options that need one device or the other.
fn check_device(network: &NetworkOptions, given: &[EngineOption]) -> Result<()> {
    let device = network.device;
    for option in given {
        if let EngineOption::LayoutTransform(target) = option {
            let matches = match target {
                TransformTarget::Auto => true,
                TransformTarget::Cpu => device == Device::Cpu,
                TransformTarget::Cuda => device != Device::Cpu,
            };
            if !matches {
                bail!("--layout-transform {} does not match --device {device}; the transform targets the device the model runs on", target.name());
            }
        }
    }
    if network.tensorrt && device == Device::Cpu {
        bail!("--tensorrt needs --device cuda");
    }
    if let Some(cores) = &network.cpu_cores {
        check_cores(cores, device)?;
    }
    if device == Device::Cpu {
        // This MegEngine build has no JIT compiler for the CPU: the engine fails, or aborts.
        if let Some(level) = network.jit_level.filter(|level| *level > 0) {
            bail!("--jit {level} needs --device cuda (MegEngine has no JIT compiler for the CPU)");
        }
        if network.graph_opt_level == Some(3) {
            bail!("--graph-opt-level 3 adds JIT fusion, which needs --device cuda (MegEngine has no JIT compiler for the CPU); use 2 or less");
        }
    }
    Ok(())
}

/// Comp-seq recording and a fake first run: refused where the engine would
/// refuse them, and the sanity check it excludes turned off with a note.
fn settle_first_run(network: &mut NetworkOptions, global: &Global) -> Result<()> {
    let record = network.record_comp_seq.unwrap_or(0);
    if record == 2 && network.fake_first {
        bail!("--fake-first cannot be combined with --record-comp-seq 2, which records the first run itself (use level 1, or drop --fake-first)");
    }
    if !network.no_sanity_check && (record == 2 || (record == 1 && network.fake_first)) {
        let with = if network.fake_first { " with --fake-first" } else { "" };
        global.note(format!(
            "--record-comp-seq {record}{with} needs the first run's var sanity check off: turned off, as with --no-sanity-check"
        ));
        network.no_sanity_check = true;
    }
    Ok(())
}

/// `--model-key HEX|@FILE`: hex digits, or the raw bytes of FILE.
fn read_model_key(spec: &str) -> Result<Vec<u8>> {
    let key = match spec.strip_prefix('@') {
        Some(file) => input_files::read(Path::new(file), &input_files::MODEL_KEY).context("--model-key")?,
        None => {
            let digits = spec.as_bytes();
            if !digits.len().is_multiple_of(2) || !digits.iter().all(u8::is_ascii_hexdigit) {
                bail!("--model-key: expected an even number of hex digits, or @FILE");
            }
            digits
                .chunks(2)
                .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).expect("hex digits"), 16).expect("hex digits"))
                .collect()
        }
    };
    if key.is_empty() {
        bail!("--model-key: the key is empty");
    }
    Ok(key)
}

/// `--cpu-cores`: CPU threads only, on cores this process may run on.
fn check_cores(cores: &[usize], device: Device) -> Result<()> {
    let list = || cores.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    if device != Device::Cpu {
        bail!(
            "--cpu-cores {} pins the engine's CPU threads: it needs --device cpu",
            list()
        );
    }
    let available = available_cores()?;
    if let Some(missing) = cores.iter().find(|core| !available.contains(core)) {
        let have: Vec<String> = available.iter().map(usize::to_string).collect();
        bail!(
            "--cpu-cores {}: core {missing} is not one this process may run on (cores {})",
            list(),
            have.join(",")
        );
    }
    Ok(())
}

/// A model with its feeds and engine options, turned once from `ModelArgs`.
pub struct ModelSettings {
    pub path: PathBuf,
    pub feeds: FeedSettings,
    pub engine: EngineSettings,
    /// Vars made outputs of the model, after its own (`run --extra-output`).
    pub extra_outputs: Vec<String>,
}

impl ModelSettings {
    /// Also claims the model and the files the feeds may read as inputs of
    /// the command, which no output may replace, then the engine's caches
    /// (`EngineSettings::claim_files`): a command claims its other inputs first.
    pub fn from_args(args: &ModelArgs, global: &Global) -> Result<ModelSettings> {
        let engine = EngineSettings::from_args(&args.engine, global)?;
        engine.warn_oversubscribed(global);
        let feeds = FeedSettings::from_args(&args.feeds)?;
        let path = args.model.clone().context("no MODEL given: name the model to run")?;
        input_files::claim(&path)?;
        feeds.claim_files()?;
        engine.claim_files()?;
        Ok(ModelSettings {
            engine,
            path,
            feeds,
            extra_outputs: Vec::new(),
        })
    }
}

/// `-i`, `--seed` and `--resize-input`, turned once from `FeedArgs`.
pub struct FeedSettings {
    /// `-i` as given, for the processes that run under them.
    pub given: Vec<String>,
    /// Each `SPEC` of `given`, `@FILE`s read, parsed once.
    pub specs: Vec<FeedSpec>,
    pub options: FeedOptions,
}

impl FeedSettings {
    pub fn from_args(args: &FeedArgs) -> Result<FeedSettings> {
        Ok(FeedSettings {
            given: args.inputs.clone(),
            specs: feeds::parse_specs(&args.inputs)?,
            options: FeedOptions {
                seed: args.seed,
                resize_input: args.resize_input,
            },
        })
    }

    /// Claims the files the specs may read as inputs of the command.
    pub fn claim_files(&self) -> Result<()> {
        self.specs
            .iter()
            .flat_map(FeedSpec::files)
            .try_for_each(input_files::claim)
    }
}

pub fn plan(iterations: &IterationArgs, global: &Global) -> RunPlan {
    RunPlan {
        warmup: iterations.warmup,
        iterations: iterations.iter,
        duration: iterations.duration,
        time_limit: iterations.max_duration,
        verbose: global.verbose,
        sample_machine: false,
    }
}

/// The comparison rules `args` give; `close` is compare's `--atol/--rtol`,
/// which take the place of an unnamed `--maxerr`.
pub fn comparison_rules(args: &ComparisonArgs, close: Option<Tolerance>) -> Result<Rules> {
    let mut unnamed = args.maxerr.iter().filter(|rule| rule.name.is_none());
    let maxerr = unnamed.next().map(|rule| rule.maxerr);
    if unnamed.next().is_some() {
        bail!("--maxerr X is given more than once: give one bound for every tensor, and NAME:X for others");
    }
    if maxerr.is_some() && close.is_some() {
        bail!("--maxerr X and --atol/--rtol are two ways to state the tolerance: give one (--maxerr NAME:X may go with either)");
    }
    let by_name = args
        .maxerr
        .iter()
        .filter_map(|rule| {
            rule.name.as_ref().map(|name| NamedMaxerr {
                name: name.clone(),
                maxerr: rule.maxerr,
            })
        })
        .collect();
    let stat = match args.stat {
        StatArg::Max => Statistic::Max,
        StatArg::Mean => Statistic::Mean,
        StatArg::Median => Statistic::Median,
    };
    Rules::new(
        close.or(maxerr.map(|maxerr| Tolerance::AssertEqual { maxerr })),
        by_name,
        stat,
        args.allow_outliers,
        args.topk.map(|k| usize::try_from(k).unwrap_or(usize::MAX)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_model_keys() {
        assert_eq!(read_model_key("00ff10").unwrap(), [0, 255, 16]);
        for bad in ["0", "zz", ""] {
            assert!(read_model_key(bad).is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("key");
        std::fs::write(&file, b"0123456789abcdef").unwrap();
        assert_eq!(
            read_model_key(&format!("@{}", file.display())).unwrap(),
            b"0123456789abcdef"
        );
    }
}
