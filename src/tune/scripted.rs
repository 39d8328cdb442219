//! A machine in virtual time for the tests of the search and of its report:
//! each candidate takes and measures what a script says, in no real time.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::candidate::{singles, Candidate};
use super::search::Search;
use super::trial::{Runner, Trial, TrialStatus};
use super::{Row, TuneOptions, TuneWatcher, Tuning};
use crate::compare::Rules;
use crate::options::EngineOption;
use crate::runner::rounds::Measured;
use crate::runner::timing::median_interval;

/// What a scripted candidate does.
pub enum Outcome {
    /// Runs at this median (each run within ±0.6% of it).
    Runs(f64),
    /// Runs at this median, each run within ±3 times this fraction of it.
    Noisy(f64, f64),
    Crashes,
    Hangs,
}

/// What a scripted candidate with these options does, the how-many-eth time it is tried.
type Script = Box<dyn FnMut(&[String], usize) -> Outcome>;

/// A machine in virtual time: loading takes `load`, fast-run without its
/// cache profiles for `profiling`, and each candidate does what `script`
/// says for its options (and how many times it was tried before).
pub struct Scripted {
    now: Instant,
    load: Duration,
    profiling: Duration,
    cached: bool,
    script: Script,
    /// Each candidate tried, in order, by its options.
    pub tried: Vec<String>,
}

impl Scripted {
    pub fn new(profiling_s: u64, script: impl FnMut(&[String], usize) -> Outcome + 'static) -> Scripted {
        Scripted {
            now: Instant::now(),
            load: Duration::from_millis(1500),
            profiling: Duration::from_secs(profiling_s),
            cached: false,
            script: Box::new(script),
            tried: Vec::new(),
        }
    }
}

impl Runner for Scripted {
    fn now(&self) -> Instant {
        self.now
    }

    fn fast_run_cached(&self) -> bool {
        self.cached
    }

    fn run(&mut self, candidate: &Candidate, runs: u64, deadline: Instant) -> Result<Trial> {
        let name = candidate.to_string();
        let before = self.tried.iter().filter(|tried| **tried == name).count();
        self.tried.push(name);
        let options = candidate.args();
        let fast_run = candidate.has(&EngineOption::FastRun);
        let profiles = fast_run && !self.cached;
        let outcome = (self.script)(&options, before);
        let started = self.now;
        let unmeasured = |status, took| Trial {
            status,
            measured: None,
            reason: (status == TrialStatus::Crashed).then(|| "bad err=45 in Xbyak::Error".to_string()),
            outputs: None,
            took,
        };
        let (median_ms, step) = match outcome {
            Outcome::Runs(median_ms) => (median_ms, 0.002),
            Outcome::Noisy(median_ms, step) => (median_ms, step),
            Outcome::Crashes => {
                self.now += Duration::from_millis(300);
                return Ok(unmeasured(TrialStatus::Crashed, self.now - started));
            }
            Outcome::Hangs => {
                self.now = deadline;
                return Ok(unmeasured(TrialStatus::TimedOut, self.now - started));
            }
        };
        let samples: Vec<f64> = (0..runs)
            .map(|run| median_ms * (1.0 + step * ((run % 7) as f64 - 3.0)))
            .collect();
        let timing = Duration::from_secs_f64(samples.iter().sum::<f64>() / 1e3);
        let took = self.load + timing + if profiles { self.profiling } else { Duration::ZERO };
        if started + took > deadline {
            self.now = deadline;
            return Ok(unmeasured(TrialStatus::TimedOut, deadline - started));
        }
        self.now += took;
        self.cached |= fast_run;
        Ok(Trial {
            status: TrialStatus::Ok,
            measured: Some(Measured {
                median_ms,
                mean_ms: median_ms,
                interval_ms: median_interval(&samples).map(|(low, high)| [low, high]),
                timing,
                load: self.load,
                profiling: profiles.then_some(self.profiling),
            }),
            reason: None,
            outputs: None,
            took,
        })
    }
}

struct Quiet;

impl TuneWatcher for Quiet {
    fn trying(&mut self, _: &Candidate) {}
    fn tried(&mut self, _: &Row, _: &Row, _: f64) {}
}

pub fn search(script: &mut Scripted, user: &[EngineOption], budget_s: u64) -> Tuning {
    let options = TuneOptions {
        budget: Duration::from_secs(budget_s),
        rules: Rules::default(),
    };
    let singles = singles(user, crate::engine::Device::Cpu, 2);
    Search::start(script, &options, &mut Quiet)
        .unwrap()
        .run(singles)
        .unwrap()
}
