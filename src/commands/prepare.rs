//! The one way a command gets a model ready to run, from its settings
//! (`settings`): `prepare` opens the model, lets the command adjust the
//! network options (its one hook), and loads the model into the engine;
//! `Prepared::feeds` resolves the inputs and `Prepared::finish` saves what
//! the engine learned.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::settings::ModelSettings;
use super::Global;
use crate::engine::{silence_stdout, Lite, NetworkOptions, StdoutSilenced};
use crate::feeds::{self, Feed, FeedOptions};
use crate::model::ModelFile;
use crate::output_files::write_atomically;
use crate::runner::testcase::testcase_feeds;
use crate::runner::{Outputs, Session};
use crate::runtime;
use crate::tensor::TensorInfo;
use crate::text::quoted_list;

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
    let mut model = ModelFile::read(&settings.path)?;
    if !settings.extra_outputs.is_empty() {
        model.add_outputs(&settings.extra_outputs).context("--output")?;
    }
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
