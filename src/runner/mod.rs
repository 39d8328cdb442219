//! Loading a graph, feeding it and timing it: the work behind `run` (and the
//! commands that build on it).

pub mod instances;
pub mod memory;
pub mod noise;
pub mod pinning;
pub mod rounds;
pub mod sequential;
pub mod testcase;
pub mod timing;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use crate::cli::MAX_RUNS;
use crate::engine::{process_cpu_time, EngineError, Lite, Network, NetworkOptions};
use crate::feeds::Feed;
use crate::model::{checked_output, EngineNames, ModelFile, EXPECTATION_SUFFIX};
use crate::options;
use crate::supervise::child::{announce, RunCounter};
use crate::supervise::Phase;
use crate::tensor::{format_shape, HostTensor, TensorInfo};
use noise::MachineSample;

/// A loaded network with what it declares.
pub struct Session {
    network: Network,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
    /// What the engine calls each of `outputs` (where the model names it otherwise).
    engine_output_names: Vec<String>,
    /// The names the engine knows under placeholders (see `NetworkOptions::writable_names`).
    names: EngineNames,
    /// Inputs the engine lists but the run does not read: the expectations of
    /// a container loaded with `Outputs::Real`.
    unread_inputs: Vec<String>,
    /// Inputs fed in another shape than declared, described for error messages.
    reshaped: Vec<String>,
    /// Taken for each run, when the network shares runtime memory with others
    /// that run on other threads (see `instances::Instances::share_memory`).
    turns: Option<Arc<Mutex<()>>>,
    /// What the network was built with: a run the algorithm options fail names them.
    options: NetworkOptions,
}

pub struct RunPlan {
    pub warmup: usize,
    pub iterations: u64,
    /// Keep running (at least `iterations`) until the timed runs took this long.
    pub duration: Option<Duration>,
    /// Stop the timed runs once they took this long, even short of `iterations`.
    pub time_limit: Option<Duration>,
    /// Echo what the engine prints while checking testcases on stderr.
    pub verbose: bool,
    /// Sample the machine around the timed runs (`run`'s noise report):
    /// over a hundred small reads of `/proc` and `/sys` the others need not pay.
    pub sample_machine: bool,
}

/// The runs of a plan, in milliseconds of forward+wait each.
pub struct Runs {
    /// The network's first run (see `timing::ColdStart::first_run`).
    pub first_ms: f64,
    pub warmup_ms: Vec<f64>,
    pub timed_ms: Vec<f64>,
    /// The process's CPU time in each timed run (`Timed::cpu_ms`).
    pub timed_cpu_ms: Vec<f64>,
    /// The machine just before the timed runs and just after, when the plan samples it.
    pub window: Option<(MachineSample, MachineSample)>,
}

/// The runs before the timed ones.
pub struct WarmedUp {
    /// The first run, unless the timed runs hold it (no warm-up, no fake first run).
    pub first_ms: Option<f64>,
    pub warmup_ms: Vec<f64>,
}

/// The timed runs.
pub struct Timed {
    pub samples: Vec<f64>,
    /// The CPU time the process (every thread of it) used in each run, in
    /// milliseconds: the engine's work, which other processes on the machine
    /// move far less than its wall time. Empty where the clock cannot be read.
    pub cpu_ms: Vec<f64>,
    /// From the start of the first to the end of the last.
    pub span: Option<(Instant, Instant)>,
}

/// Which run of a plan just finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// The `--fake-first` run, which only allocates.
    FakeFirst,
    /// Warm-up run number N, from 1.
    Warmup(usize),
    /// Timed run number N, from 1.
    Measured(u64),
}

/// Told about every run of `Session::measure`, outside the timed span.
pub trait RunObserver {
    fn after_run(&mut self, kind: RunKind, started: Instant, finished: Instant) -> Result<()>;
}

/// No observer.
impl RunObserver for () {
    fn after_run(&mut self, _: RunKind, _: Instant, _: Instant) -> Result<()> {
        Ok(())
    }
}

/// An observer that may be absent (`mge run` without `--profile`).
impl<T: RunObserver> RunObserver for Option<T> {
    fn after_run(&mut self, kind: RunKind, started: Instant, finished: Instant) -> Result<()> {
        match self {
            Some(observer) => observer.after_run(kind, started, finished),
            None => Ok(()),
        }
    }
}

/// Fast-run profiles the algorithms of each operator during a network's
/// first run (not while it loads) and keeps the winners in the engine's
/// in-process cache. To tell that profiling from the first run, a copy of
/// the network that shares its weights and runtime memory runs once before
/// it: that run profiles and fills the cache, and the network's own first
/// run then finds every algorithm there. Returns the copy's run in
/// milliseconds (see `timing::ColdStart::new`); `None`, and nothing run,
/// when the engine does not profile then.
pub fn profile_algorithms(
    session: &Session,
    lite: &Lite,
    options: &NetworkOptions,
    feeds: &[Feed],
) -> Result<Option<f64>> {
    if !options.profiles_at_first_run() {
        return Ok(None);
    }
    announce(Phase::Profiling);
    let mut copy = session
        .copy(lite, &options.for_copy(options.worker), true, feeds)
        .context("cannot make the copy of the network that profiles algorithms")?;
    Ok(Some(copy.run_once()?))
}

/// Which outputs a testcase container's model is loaded with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// As dumped: its AssertEqual operators, which check the embedded testcases.
    Asserted,
    /// The vars those operators check, as the model had them before the dump:
    /// for running it on other feeds (the assertions are left out of the run).
    Real,
}

impl RunPlan {
    /// One run and no warm-up: enough to judge a testcase or dump a run's tensors.
    pub fn once(verbose: bool) -> RunPlan {
        RunPlan {
            warmup: 0,
            iterations: 1,
            duration: None,
            time_limit: None,
            verbose,
            sample_machine: false,
        }
    }

    /// The runs of `run --profile`'s profiled copy: one warm-up (its first
    /// run allocates), then as many runs as `iterations`, without `duration`.
    pub fn profiled(&self) -> RunPlan {
        RunPlan {
            warmup: 1,
            iterations: self.iterations,
            duration: None,
            time_limit: self.time_limit,
            verbose: self.verbose,
            sample_machine: false,
        }
    }

    /// Whether another timed run is due after `done` of them, the first of
    /// which started at `since`: `--duration` stops at `MAX_RUNS` too.
    fn wants_another(&self, done: u64, since: Option<Instant>) -> bool {
        let spent = |limit: Duration| since.is_some_and(|since| since.elapsed() >= limit);
        if self.time_limit.is_some_and(spent) {
            return false;
        }
        done < self.iterations
            || self
                .duration
                .is_some_and(|duration| done < MAX_RUNS && since.is_none_or(|since| since.elapsed() < duration))
    }

    /// Whether timed runs under `--duration` stopped at `MAX_RUNS` after `done`.
    pub fn stopped_at_most(&self, done: usize) -> bool {
        self.duration.is_some() && done as u64 >= MAX_RUNS
    }
}

/// The engine's refusal to load `model`, in the user's terms where they are
/// known: an operator no library provides, an encrypted model that does not decrypt.
fn explain_load_failure(err: anyhow::Error, model: &ModelFile) -> anyhow::Error {
    let Some(engine) = err.downcast_ref::<EngineError>() else {
        return err.context("the engine cannot load the model");
    };
    if let Some(loader) = engine
        .extra_message()
        .and_then(|extra| extra.strip_prefix("can not find loader for ExternCOprRunner '"))
        .and_then(|rest| rest.split('\'').next())
    {
        return anyhow!("the model needs the extern operator '{loader}', which no loaded library provides: load its library with --c-opr-lib PATH");
    }
    let methods = model.decryption_methods();
    let undecrypted = ["invalid model format", "The checksum of the file cannot be verified"]
        .iter()
        .any(|symptom| engine.message.contains(symptom));
    if !methods.is_empty() && undecrypted {
        return anyhow!(
            "the engine cannot decrypt the model with its {} key: the key (--model-key) or the method is wrong, or the file is damaged",
            methods.join(" and ")
        );
    }
    err.context("the engine cannot load the model")
}

impl Session {
    /// The model graph of `model`, loaded for `options`.
    pub fn load(lite: &Lite, model: &ModelFile, outputs: Outputs, options: &NetworkOptions) -> Result<Session> {
        let (graph, names) = match outputs {
            Outputs::Asserted => (model.graph().to_vec(), Vec::new()),
            Outputs::Real => model.graph_with_real_outputs()?,
        };
        let (graph, engine_names) = match options.writable_names {
            true => model.with_writable_names(graph)?,
            false => (graph, EngineNames::none()),
        };
        announce(Phase::Load);
        let mut session =
            Session::open_named(lite, graph, options, engine_names).map_err(|err| explain_load_failure(err, model))?;
        // The engine still lists the expectations as inputs, but no longer reads them.
        session.unread_inputs = names
            .iter()
            .flatten()
            .map(|name| format!("{name}{EXPECTATION_SUFFIX}"))
            .collect();
        let unread = &session.unread_inputs;
        session.inputs.retain(|input| !unread.contains(&input.name));
        for (output, name) in session.outputs.iter_mut().zip(names) {
            if let Some(name) = name {
                output.name = name;
            }
        }
        // An AssertEqual's output is named after the output it checks, as the
        // testcases' lines name it: `feat`, not `assert_eq(feat:expect,feat)[86]`.
        if outputs == Outputs::Asserted {
            for output in &mut session.outputs {
                if let Some(checked) = checked_output(&output.name) {
                    output.name = checked.to_string();
                }
            }
        }
        Ok(session)
    }

    /// What the engine calls each of `outputs`, where the model names them
    /// otherwise (a container's AssertEqual outputs).
    pub fn engine_output_names(&self) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
        self.engine_output_names.iter().map(|name| self.names.restore(name))
    }

    /// Any one graph (a model's, or a testcase's).
    pub fn open(lite: &Lite, graph: impl Into<Vec<u8>>, options: &NetworkOptions) -> Result<Session> {
        Session::open_named(lite, graph.into(), options, EngineNames::none())
    }

    /// A graph whose `names` the engine knows under placeholders.
    fn open_named(lite: &Lite, graph: Vec<u8>, options: &NetworkOptions, names: EngineNames) -> Result<Session> {
        let network = lite.load_network(graph, options)?;
        let restored = |mut infos: Vec<TensorInfo>| {
            for info in &mut infos {
                info.name = names.restore(&info.name).into_owned();
            }
            infos
        };
        let inputs = restored(network.inputs()?);
        let engine_outputs = network.outputs()?;
        let engine_output_names = engine_outputs.iter().map(|output| output.name.clone()).collect();
        Ok(Session {
            network,
            inputs,
            engine_output_names,
            outputs: restored(engine_outputs),
            names,
            unread_inputs: Vec::new(),
            reshaped: Vec::new(),
            turns: None,
            options: options.clone(),
        })
    }

    /// Every input the engine lists, those the run does not read too: what a
    /// container's testcase holds a value for.
    pub fn testcase_inputs(&self) -> Vec<&str> {
        let inputs = self.inputs.iter().map(|input| input.name.as_str());
        inputs.chain(self.unread_inputs.iter().map(String::as_str)).collect()
    }

    /// Copies feeds into the inputs. A feed in another shape than declared is
    /// left for the engine to accept or refuse on the first run.
    pub fn feed(&mut self, feeds: &[Feed]) -> Result<()> {
        for feed in feeds {
            let declared = self
                .inputs
                .iter()
                .find(|input| input.name == feed.name)
                .with_context(|| format!("the model has no input '{}'", feed.name))?;
            if feed.tensor.shape != declared.shape {
                self.reshaped.push(format!(
                    "input '{}': shape {} from '{}' differs from the model's {}",
                    feed.name,
                    format_shape(&feed.tensor.shape),
                    feed.source,
                    format_shape(&declared.shape)
                ));
            }
            self.network
                .set_input(&self.names.engine_name(&feed.name), &feed.tensor)
                .with_context(|| format!("input '{}' from '{}'", feed.name, feed.source))?;
        }
        Ok(())
    }

    /// Whether every input was fed in the shape the model declares: then the
    /// outputs have the shapes the engine declares for them.
    pub fn fed_as_declared(&self) -> bool {
        self.reshaped.is_empty()
    }

    /// Runs the fake first run (if asked), `warmup` untimed runs, then the timed
    /// ones, telling `observer` about each, and the parent where it is.
    pub fn measure(&mut self, plan: &RunPlan, observer: &mut impl RunObserver) -> Result<Runs> {
        let warmed = self.warm_up(plan, observer, true)?;
        let before = plan.sample_machine.then(MachineSample::now);
        let timed = self.time(plan, observer, true)?;
        let after = plan.sample_machine.then(MachineSample::now);
        Ok(Runs {
            first_ms: warmed.first_ms.or(timed.samples.first().copied()).unwrap_or(0.0),
            warmup_ms: warmed.warmup_ms,
            timed_ms: timed.samples,
            timed_cpu_ms: timed.cpu_ms,
            window: before.zip(after),
        })
    }

    /// The fake first run (if asked) and the warm-up runs; `shown` tells the
    /// parent how far they are.
    pub fn warm_up(&mut self, plan: &RunPlan, observer: &mut impl RunObserver, shown: bool) -> Result<WarmedUp> {
        let runs = plan.warmup as u64;
        let mut counter = (shown && runs > 0).then(|| RunCounter::start(Phase::Warmup { runs }));
        let mut warmed = WarmedUp {
            first_ms: None,
            warmup_ms: Vec::with_capacity(plan.warmup),
        };
        if self.network.wants_fake_run() {
            let (started, finished) = self.timed_forward()?;
            observer.after_run(RunKind::FakeFirst, started, finished)?;
            warmed.first_ms = Some(millis(started, finished));
        }
        for run in 1..=plan.warmup {
            let (started, finished) = self.timed_forward()?;
            observer.after_run(RunKind::Warmup(run), started, finished)?;
            warmed.warmup_ms.push(millis(started, finished));
            warmed.first_ms.get_or_insert(millis(started, finished));
            counter.iter_mut().for_each(RunCounter::add_one);
        }
        Ok(warmed)
    }

    /// The timed runs of `plan`; `shown` tells the parent how far they are.
    pub fn time(&mut self, plan: &RunPlan, observer: &mut impl RunObserver, shown: bool) -> Result<Timed> {
        let mut counter = shown.then(|| {
            RunCounter::start(Phase::Iterations {
                runs: plan.iterations,
                duration_ms: plan.duration.map(|duration| duration.as_millis() as u64),
            })
        });
        let mut samples = Vec::with_capacity(plan.iterations.min(MAX_RUNS) as usize);
        let mut cpu_ms = Vec::with_capacity(samples.capacity());
        let mut span: Option<(Instant, Instant)> = None;
        while plan.wants_another(samples.len() as u64, span.map(|(first, _)| first)) {
            let cpu_before = process_cpu_time();
            let (started, finished) = self.timed_forward()?;
            let cpu_after = process_cpu_time();
            samples.push(millis(started, finished));
            if let Some((before, after)) = cpu_before.zip(cpu_after) {
                cpu_ms.push(after.saturating_sub(before).as_secs_f64() * 1e3);
            }
            span = Some((span.map_or(started, |(first, _)| first), finished));
            observer.after_run(RunKind::Measured(samples.len() as u64), started, finished)?;
            counter.iter_mut().for_each(RunCounter::add_one);
        }
        if cpu_ms.len() != samples.len() {
            cpu_ms.clear();
        }
        Ok(Timed { samples, cpu_ms, span })
    }

    /// One run, with when it started and finished.
    fn timed_forward(&mut self) -> Result<(Instant, Instant)> {
        let started = Instant::now();
        self.forward()?;
        Ok((started, Instant::now()))
    }

    /// See `Network::dump_layout_transform_model`.
    pub fn dump_layout_transform_model(&self, path: &std::path::Path) -> Result<()> {
        self.network.dump_layout_transform_model(path)
    }

    /// The names the engine knows under placeholders: what its profile and dumps hold.
    pub fn engine_names(&self) -> &EngineNames {
        &self.names
    }

    /// See `Network::profiler_started`.
    pub fn profiler_started(&self) -> Option<Instant> {
        self.network.profiler_started()
    }

    /// A copy of this session's network built for `options`, sharing its
    /// weights (and with `share_memory` its runtime memory: see
    /// `Lite::share_weights`), fed `feeds`.
    pub fn copy(&self, lite: &Lite, options: &NetworkOptions, share_memory: bool, feeds: &[Feed]) -> Result<Session> {
        let mut copy = Session {
            network: lite.share_weights(&self.network, options, share_memory)?,
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
            engine_output_names: self.engine_output_names.clone(),
            names: self.names.clone(),
            unread_inputs: self.unread_inputs.clone(),
            reshaped: Vec::new(),
            turns: None,
            options: options.clone(),
        };
        copy.feed(feeds)?;
        Ok(copy)
    }

    /// One run outside any plan: its forward+wait in milliseconds.
    pub fn run_once(&mut self) -> Result<f64> {
        let (started, finished) = self.timed_forward()?;
        Ok(millis(started, finished))
    }

    /// One run, in its turn where the network takes turns with others.
    fn forward(&mut self) -> Result<()> {
        let turns = self.turns.clone();
        let _turn = turns
            .as_deref()
            .map(|turns| turns.lock().unwrap_or_else(|e| e.into_inner()));
        self.forward_now()
    }

    /// Every output's value after this network's last run: where it takes
    /// turns with others that may have run since in the memory it shares
    /// with them, after a run of its own in its turn.
    pub fn outputs_of_own_run(&mut self) -> Result<Vec<(String, HostTensor)>> {
        let Some(turns) = self.turns.clone() else {
            return self.read_outputs();
        };
        let _turn = turns.lock().unwrap_or_else(|e| e.into_inner());
        self.forward_now()?;
        self.read_outputs()
    }

    /// One run; a failure after an input changed shape names that input, and
    /// one the options that choose algorithms caused names those options.
    fn forward_now(&mut self) -> Result<()> {
        let reshaped = &self.reshaped;
        let names = &self.names;
        let options = &self.options;
        self.network.forward().map_err(|err| {
            let err = blame_algorithm_options(restore_names(err, names), options);
            match reshaped.as_slice() {
                [] => err,
                inputs => err.context(format!("{}, and the model does not accept it", inputs.join("; "))),
            }
        })
    }

    /// Every output's value after the last run, in the model's order.
    pub fn read_outputs(&self) -> Result<Vec<(String, HostTensor)>> {
        self.outputs
            .iter()
            .zip(&self.engine_output_names)
            .map(|(info, engine_name)| Ok((info.name.clone(), self.network.output(engine_name)?)))
            .collect()
    }
}

/// The engine's error, after the options of `network` that left it no
/// algorithm for an operator where they did (`options::algorithm_refusal`).
fn blame_algorithm_options(err: anyhow::Error, network: &NetworkOptions) -> anyhow::Error {
    let refusal = err
        .downcast_ref::<EngineError>()
        .and_then(|engine| options::algorithm_refusal(&format!("{}\n{}", engine.message, engine.backtrace), network));
    match refusal {
        Some(refusal) => err.context(refusal),
        None => err,
    }
}

/// The engine's error with the names it quotes as the model has them.
fn restore_names(err: anyhow::Error, names: &EngineNames) -> anyhow::Error {
    if names.is_empty() {
        return err;
    }
    match err.downcast::<EngineError>() {
        Ok(mut engine) => {
            engine.message = names.restore(&engine.message).into_owned();
            engine.into()
        }
        Err(err) => err,
    }
}

fn millis(started: Instant, finished: Instant) -> f64 {
    (finished - started).as_secs_f64() * 1e3
}
