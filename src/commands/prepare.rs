//! The one way a command gets a model ready to run. Its arguments are turned
//! once into plain settings (`ModelSettings`, `EngineSettings`: ripgrep's low
//! and high arguments); `prepare` then opens the model, lets the command adjust
//! the network options (its one hook), and loads the model into the engine;
//! `Prepared::feeds` resolves the inputs and `Prepared::finish` saves what the
//! engine learned.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::Global;
use crate::cli::{EngineArgs, IterationArgs, LayoutTransformTarget, ModelArgs};
use crate::engine::{silence_stdout, Device, Lite, NetworkOptions, StdoutSilenced};
use crate::feeds::{self, Feed, FeedOptions};
use crate::model::ModelFile;
use crate::options::{EngineOption, TransformTarget};
use crate::output_files::write_atomically;
use crate::runner::testcase::testcase_feeds;
use crate::runner::{Outputs, Plan, Session};
use crate::runtime;
use crate::tensor::TensorInfo;
use crate::text::quoted_list;

/// A command's engine options, turned once from its arguments.
pub struct EngineSettings {
    /// As given, in order: for the processes that run under them.
    pub given: Vec<EngineOption>,
    /// What the network is built with, pairings the engine would refuse settled.
    pub network: NetworkOptions,
}

impl EngineSettings {
    pub fn from_args(args: &EngineArgs, global: &Global) -> Result<EngineSettings> {
        EngineSettings::from_given(given_options(args)?, global)
    }

    /// The options `given`, checked: refused here in one line where the engine
    /// would only refuse them with an assertion, or (the sanity check that
    /// comp-seq recording excludes) turned off with a note.
    pub fn from_given(given: Vec<EngineOption>, global: &Global) -> Result<EngineSettings> {
        let mut network = NetworkOptions::default();
        given.iter().for_each(|option| option.apply(&mut network));
        let device = network.device;
        for option in &given {
            if let EngineOption::LayoutTransform(target) = option {
                let matches = match target {
                    TransformTarget::Auto => true,
                    TransformTarget::Cpu => device == Device::Cpu,
                    TransformTarget::Cuda => device != Device::Cpu,
                };
                if !matches {
                    bail!("--layout-transform {target:?} does not match --device {device}; the transform targets the device the model runs on");
                }
            }
        }
        if network.tensorrt && device == Device::Cpu {
            bail!("--tensorrt needs --device cuda");
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
        Ok(EngineSettings { given, network })
    }

    /// These settings and `option` (a command's own default).
    pub fn with(mut self, option: EngineOption) -> EngineSettings {
        option.apply(&mut self.network);
        self.given.push(option);
        self
    }

    /// The fast-run cache the runtime reads before loading and updates after the runs.
    pub fn fast_run_cache(&self) -> Option<&Path> {
        self.given.iter().find_map(|option| match option {
            EngineOption::FastRunCache(file) => Some(file.as_path()),
            _ => None,
        })
    }
}

/// The options `args` give, in the order a command line lists them.
fn given_options(args: &EngineArgs) -> Result<Vec<EngineOption>> {
    let mut given = Vec::new();
    let device = parse_device(&args.device)?;
    if device != Device::Cpu {
        given.push(EngineOption::Device(device));
    }
    let flags = [
        (args.cpu_inplace, EngineOption::CpuInplace),
        (args.fast_run, EngineOption::FastRun),
        (args.reproducible, EngineOption::Reproducible),
        (args.weight_preprocess, EngineOption::WeightPreprocess),
        (args.fuse_preprocess, EngineOption::FusePreprocess),
        (args.const_shape, EngineOption::ConstShape),
        (args.fake_first, EngineOption::FakeFirst),
        (args.no_sanity_check, EngineOption::NoSanityCheck),
        (args.tensorrt, EngineOption::TensorRt),
    ];
    given.extend(flags.into_iter().filter_map(|(on, option)| on.then_some(option)));
    let target = args.layout_transform.map(|target| match target {
        LayoutTransformTarget::Auto => TransformTarget::Auto,
        LayoutTransformTarget::Cpu => TransformTarget::Cpu,
        LayoutTransformTarget::Cuda => TransformTarget::Cuda,
    });
    given.extend(
        [
            args.threads.map(EngineOption::Threads),
            args.fast_run_cache.clone().map(EngineOption::FastRunCache),
            args.record_comp_seq.map(EngineOption::RecordCompSeq),
            args.graph_opt_level.map(EngineOption::GraphOptLevel),
            args.async_level.map(EngineOption::AsyncLevel),
            args.jit.map(EngineOption::Jit),
            args.workspace_limit.map(EngineOption::WorkspaceLimit),
            args.layout.map(EngineOption::Layout),
            target.map(EngineOption::LayoutTransform),
        ]
        .into_iter()
        .flatten(),
    );
    Ok(given)
}

pub fn parse_device(text: &str) -> Result<Device> {
    match text.split_once(':') {
        None if text == "cpu" => Ok(Device::Cpu),
        None if text == "cuda" => Ok(Device::Cuda(0)),
        Some(("cuda", id)) => {
            Ok(Device::Cuda(id.parse().with_context(|| {
                format!("--device {text}: '{id}' is not a device number")
            })?))
        }
        _ => bail!("--device {text}: expected cpu, cuda or cuda:ID"),
    }
}

/// A model with its feeds and engine options, turned once from `ModelArgs`.
pub struct ModelSettings {
    pub path: PathBuf,
    /// `-i` as given (`@FILE` not read yet).
    pub inputs: Vec<String>,
    pub feeds: FeedOptions,
    pub engine: EngineSettings,
}

impl ModelSettings {
    pub fn from_args(args: &ModelArgs, global: &Global) -> Result<ModelSettings> {
        Ok(ModelSettings {
            engine: EngineSettings::from_args(&args.engine, global)?,
            path: args.model.clone(),
            inputs: args.feeds.inputs.clone(),
            feeds: FeedOptions {
                seed: args.feeds.seed,
                resize_input: args.feeds.resize_input,
            },
        })
    }
}

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

/// The model as `prepare` opened it, for the command's hook.
pub struct Opened {
    pub model: ModelFile,
    /// Whether the embedded testcases stand in for feeds (see `Testcases`).
    pub testcases: bool,
}

/// A model loaded into the engine, ready to be fed and run.
pub struct Prepared<'a> {
    /// Before `engine_output`: the network goes while the engine's output is still kept off stdout.
    pub session: Session,
    engine_output: StdoutSilenced,
    pub lite: Lite,
    pub model: ModelFile,
    pub testcases: bool,
    /// The network options after the command's hook.
    pub options: NetworkOptions,
    /// When the engine began to load the model.
    pub loading: Instant,
    specs: Vec<String>,
    settings: &'a ModelSettings,
}

/// Opens the model of `settings`, lets `adjust` (the command's hook) check
/// what it must before the engine starts and change the network options, then
/// loads the model into the engine. Returns the loaded model with what `adjust` returned.
pub fn prepare<'a, T>(
    settings: &'a ModelSettings,
    testcases: Testcases,
    global: &Global,
    adjust: impl FnOnce(&Opened, &mut NetworkOptions) -> Result<T>,
) -> Result<(Prepared<'a>, T)> {
    let specs = feeds::expand_specs(&settings.inputs)?;
    let model = ModelFile::read(&settings.path)?;
    let opened = Opened {
        testcases: testcases != Testcases::Ignore && model.is_container() && specs.is_empty(),
        model,
    };
    let mut options = settings.engine.network.clone();
    let adjusted = adjust(&opened, &mut options)?;
    let lite = runtime::load(global.lite_lib.as_deref(), global.verbose)?;
    // Before loading: a missing device is not the model's fault.
    lite.check_device(options.device)?;
    if let Some(cache) = settings.engine.fast_run_cache() {
        lite.use_algo_cache(cache)?;
    }
    let engine_output = silence_stdout(global.verbose);
    let outputs = match testcases {
        Testcases::Run if opened.testcases => Outputs::Asserted,
        _ => Outputs::Real,
    };
    let loading = Instant::now();
    let session = Session::load(&lite, &opened.model, outputs, &options)?;
    let prepared = Prepared {
        session,
        engine_output,
        lite,
        model: opened.model,
        testcases: opened.testcases,
        options,
        loading,
        specs,
        settings,
    };
    Ok((prepared, adjusted))
}

impl Prepared<'_> {
    /// The user's feeds; without any, the first testcase's values (with a
    /// note) where the testcases stand in for feeds, else `#rand`.
    pub fn feeds(&self, global: &Global) -> Result<Vec<Feed>> {
        match self.model.testcases().next() {
            Some(testcase) if self.testcases => {
                global.note(format!(
                    "no --input given; feeding testcase 0 of {}",
                    self.settings.path.display()
                ));
                testcase_feeds(&self.lite, testcase, &self.session, 0).context("testcase 0")
            }
            _ => resolve_feeds(&self.specs, &self.session.inputs, &self.settings.feeds, global),
        }
    }

    /// Saves the fast-run cache, if one was named, and lets the network go:
    /// the engine finishes its dumps then. Returns the runtime.
    pub fn finish(self) -> Result<Lite> {
        if let Some(cache) = self.settings.engine.fast_run_cache() {
            save_algo_cache(&self.lite, cache)?;
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

/// The user's feeds, or `#rand` for every input when there are none.
fn resolve_feeds(specs: &[String], inputs: &[TensorInfo], options: &FeedOptions, global: &Global) -> Result<Vec<Feed>> {
    if specs.is_empty() {
        let defaults: Vec<String> = inputs
            .iter()
            .map(|input| format!("{}:{}", input.name, feeds::default_spec(input)))
            .collect();
        if !inputs.is_empty() {
            global.note(format!("no --input given; feeding {}", defaults.join(", ")));
        }
        return feeds::resolve(&defaults, inputs, options);
    }
    let feeds = feeds::resolve(specs, inputs, options)?;
    for feed in &feeds {
        if let Some(stored) = feed.converted_from {
            global.note(format!(
                "input '{}': {stored} values from '{}' converted to {}",
                feed.name, feed.source, feed.tensor.dtype
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

pub fn plan(iterations: &IterationArgs, global: &Global) -> Plan {
    Plan {
        warmup: iterations.warmup,
        iterations: iterations.iter,
        duration: iterations.duration,
        verbose: global.verbose,
    }
}

/// Writes the engine's fast-run cache to `cache`. The engine writes it to a
/// temporary file first, so a failure leaves the previous cache intact.
fn save_algo_cache(lite: &Lite, cache: &Path) -> Result<()> {
    let dumped = tempfile::NamedTempFile::new().context("--fast-run-cache: cannot create a temporary file")?;
    lite.dump_algo_cache(dumped.path())?;
    let contents = std::fs::read(dumped.path()).context("--fast-run-cache: cannot read the engine's cache")?;
    write_atomically(cache, &contents).context("--fast-run-cache")
}

/// Options under which the engine would pass every testcase unchecked.
pub fn refuse_unchecked_testcases(options: &NetworkOptions) -> Result<()> {
    if options.record_comp_seq == Some(2) {
        bail!("--record-comp-seq 2 disables the engine's AssertEqual, so testcases cannot be checked (use level 1, or --no-testcase with `mge run`)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices() {
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
        assert_eq!(parse_device("cuda").unwrap(), Device::Cuda(0));
        assert_eq!(parse_device("cuda:3").unwrap(), Device::Cuda(3));
        for bad in ["gpu", "cuda:x", "cpu:1", ""] {
            assert!(parse_device(bad).is_err(), "{bad}");
        }
    }
}
