//! Loading a graph, feeding it and timing it: the work behind `run` (and the
//! commands that build on it).

pub mod testcase;
pub mod timing;

use std::time::Instant;

use anyhow::{Context, Result};

use crate::engine::{Lite, Network, NetworkOptions};
use crate::feeds::Feed;
use crate::report::progress;
use crate::tensor::{format_shape, HostTensor, TensorInfo};

/// A loaded network with what it declares.
pub struct Session {
    network: Network,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
    /// Inputs fed in another shape than declared, described for error messages.
    reshaped: Vec<String>,
}

pub struct Plan {
    pub warmup: usize,
    pub iterations: u64,
    /// No progress bar.
    pub quiet: bool,
    /// Echo what the engine prints while checking testcases on stderr.
    pub verbose: bool,
}

impl Session {
    pub fn open(lite: &Lite, graph: &[u8], options: &NetworkOptions) -> Result<Session> {
        let network = lite.load_network(graph.to_vec(), options)?;
        let inputs = network.inputs()?;
        let outputs = network.outputs()?;
        Ok(Session {
            network,
            inputs,
            outputs,
            reshaped: Vec::new(),
        })
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
    /// ones; returns each timed run's forward+wait in milliseconds.
    pub fn measure(&mut self, plan: &Plan) -> Result<Vec<f64>> {
        if self.network.wants_fake_run() {
            self.forward()?;
        }
        let total = plan.warmup as u64 + plan.iterations;
        let bar = progress::runs(total, "running", plan.quiet);
        let mut samples = Vec::with_capacity(plan.iterations as usize);
        for run in 0..total {
            let started = Instant::now();
            self.forward()?;
            let elapsed = started.elapsed();
            if run >= plan.warmup as u64 {
                samples.push(elapsed.as_secs_f64() * 1e3);
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(samples)
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
            .map(|info| Ok((info.name.clone(), self.network.output(&info.name)?)))
            .collect()
    }
}
