//! Loading a graph, feeding it and timing it: the work behind `run` (and the
//! commands that build on it).

pub mod memory;
pub mod testcase;
pub mod timing;

use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use crate::engine::{EngineError, Lite, Network, NetworkOptions};
use crate::feeds::Feed;
use crate::model::{ModelFile, EXPECTATION_SUFFIX};
use crate::supervise::child::{announce, RunCounter};
use crate::supervise::Phase;
use crate::tensor::{format_shape, HostTensor, TensorInfo};

/// A loaded network with what it declares.
pub struct Session {
    network: Network,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
    /// What the engine calls each of `outputs` (where the model names it otherwise).
    engine_output_names: Vec<String>,
    /// Inputs the engine lists but the run does not read: the expectations of
    /// a container loaded with `Outputs::Real`.
    unread_inputs: Vec<String>,
    /// Inputs fed in another shape than declared, described for error messages.
    reshaped: Vec<String>,
}

pub struct Plan {
    pub warmup: usize,
    pub iterations: u64,
    /// Keep running (at least `iterations`) until the timed runs took this long.
    pub duration: Option<Duration>,
    /// Echo what the engine prints while checking testcases on stderr.
    pub verbose: bool,
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

/// Which outputs a testcase container's model is loaded with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// As dumped: its AssertEqual operators, which check the embedded testcases.
    Asserted,
    /// The vars those operators check, as the model had them before the dump:
    /// for running it on other feeds (the assertions are left out of the run).
    Real,
}

impl Plan {
    /// One run and no warm-up: enough to judge a testcase or dump a run's tensors.
    pub fn once(verbose: bool) -> Plan {
        Plan {
            warmup: 0,
            iterations: 1,
            duration: None,
            verbose,
        }
    }

    /// Whether another timed run is due after `done` of them, the first of
    /// which started at `since`.
    fn wants_another(&self, done: u64, since: Option<Instant>) -> bool {
        done < self.iterations
            || self
                .duration
                .is_some_and(|duration| since.is_none_or(|since| since.elapsed() < duration))
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
        announce(Phase::Load);
        let mut session = Session::open(lite, graph, options).map_err(|err| explain_load_failure(err, model))?;
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
        Ok(session)
    }

    /// Any one graph (a model's, or a testcase's).
    pub fn open(lite: &Lite, graph: impl Into<Vec<u8>>, options: &NetworkOptions) -> Result<Session> {
        let network = lite.load_network(graph.into(), options)?;
        let inputs = network.inputs()?;
        let outputs = network.outputs()?;
        Ok(Session {
            network,
            inputs,
            engine_output_names: outputs.iter().map(|output| output.name.clone()).collect(),
            outputs,
            unread_inputs: Vec::new(),
            reshaped: Vec::new(),
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
                .set_input(&feed.name, &feed.tensor)
                .with_context(|| format!("input '{}' from '{}'", feed.name, feed.source))?;
        }
        Ok(())
    }

    /// Runs the fake first run (if asked), `warmup` untimed runs, then the timed
    /// ones, telling `observer` about each; returns each timed run's
    /// forward+wait in milliseconds.
    pub fn measure(&mut self, plan: &Plan, observer: &mut impl RunObserver) -> Result<Vec<f64>> {
        let warmup = plan.warmup as u64;
        let timed = Phase::Iterations { runs: plan.iterations };
        let mut counter = RunCounter::start(if warmup > 0 {
            Phase::Warmup { runs: warmup }
        } else {
            timed
        });
        if self.network.wants_fake_run() {
            let started = Instant::now();
            self.forward()?;
            observer.after_run(RunKind::FakeFirst, started, Instant::now())?;
        }
        let mut samples = Vec::with_capacity(plan.iterations as usize);
        let mut measuring_since = None;
        let mut run = 0;
        while run < warmup || plan.wants_another(samples.len() as u64, measuring_since) {
            if run == warmup && warmup > 0 {
                counter = RunCounter::start(timed);
            }
            let started = Instant::now();
            self.forward()?;
            let finished = Instant::now();
            let kind = if run < warmup {
                RunKind::Warmup(run as usize + 1)
            } else {
                measuring_since.get_or_insert(started);
                samples.push((finished - started).as_secs_f64() * 1e3);
                RunKind::Measured(run - warmup + 1)
            };
            observer.after_run(kind, started, finished)?;
            run += 1;
            counter.add_one();
        }
        Ok(samples)
    }

    /// See `Network::dump_layout_transform_model`.
    pub fn dump_layout_transform_model(&self, path: &std::path::Path) -> Result<()> {
        self.network.dump_layout_transform_model(path)
    }

    /// See `Network::profiler_started`.
    pub fn profiler_started(&self) -> Option<Instant> {
        self.network.profiler_started()
    }

    /// One run; a failure after an input changed shape names that input.
    fn forward(&mut self) -> Result<()> {
        let reshaped = &self.reshaped;
        self.network.forward().map_err(|err| match reshaped.as_slice() {
            [] => err,
            inputs => err.context(format!("{}, and the model does not accept it", inputs.join("; "))),
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
