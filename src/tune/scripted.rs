//! A machine in virtual time for the tests of the search and of its report:
//! each candidate takes and measures what a script says, in no real time.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::candidate::{singles, Candidate};
use super::cost::OnRecord;
use super::record::{RecordedSearch, SearchRecord};
use super::search::Search;
use super::trial::{Runner, Trial, TrialStatus};
use super::{Row, TuneOptions, TuneWatcher, Tuning};
use crate::compare::Rules;
use crate::options::EngineOption;
use crate::runner::noise::{loaded, online_cores};
use crate::runner::rounds::{Measure, Measured};
use crate::runner::timing::{median_interval, spread_percent};

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

/// A machine in virtual time: loading takes `load`, fast-run profiles for
/// `profiling` where its algorithms are not cached yet (per the options that
/// choose them, or change the operators), other processes use
/// `other_load_cores`, and each candidate does what `script` says for its
/// options (and how many times it was tried before).
pub struct Scripted {
    now: Instant,
    load: Duration,
    profiling: Duration,
    /// The candidates (without the options that do not change what fast-run
    /// profiles) whose algorithms are cached, and so not profiled again.
    pub cached: Vec<String>,
    /// What the algorithm cache recorded of fast-run's profiling before.
    pub on_record: Option<OnRecord>,
    pub other_load_cores: f64,
    script: Script,
    /// Each candidate tried, in order, by its options.
    pub tried: Vec<String>,
}

/// What of `candidate` fast-run's cache is kept by: its options but fast-run
/// and the recording of the kernel sequence, which change nothing it profiles.
fn profiled_as(candidate: &Candidate) -> String {
    candidate
        .0
        .iter()
        .filter(|option| !matches!(option, EngineOption::FastRun | EngineOption::RecordCompSeq(_)))
        .flat_map(EngineOption::args)
        .collect::<Vec<_>>()
        .join(" ")
}

impl Scripted {
    pub fn new(profiling_s: u64, script: impl FnMut(&[String], usize) -> Outcome + 'static) -> Scripted {
        Scripted {
            now: Instant::now(),
            load: Duration::from_millis(1500),
            profiling: Duration::from_secs(profiling_s),
            cached: Vec::new(),
            on_record: None,
            other_load_cores: 0.0,
            script: Box::new(script),
            tried: Vec::new(),
        }
    }
}

impl Runner for Scripted {
    fn now(&self) -> Instant {
        self.now
    }

    fn fast_run_cached(&self, candidate: &Candidate) -> bool {
        self.cached.contains(&profiled_as(candidate))
    }

    fn profiling_on_record(&self, _: &Candidate) -> Option<OnRecord> {
        self.on_record
    }

    fn machine_loaded(&self) -> bool {
        loaded(self.other_load_cores, online_cores())
    }

    fn hold_on(&mut self, _: Measure) {}

    fn run(&mut self, candidate: &Candidate, runs: u64, deadline: Instant) -> Result<Trial> {
        let name = candidate.to_string();
        let before = self.tried.iter().filter(|tried| **tried == name).count();
        self.tried.push(name);
        let options = candidate.args();
        let fast_run = candidate.has(&EngineOption::FastRun);
        let profiles = fast_run && !self.fast_run_cached(candidate);
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
        if profiles {
            self.cached.push(profiled_as(candidate));
        }
        Ok(Trial {
            status: TrialStatus::Ok,
            measured: Some(Measured {
                median_ms,
                cpu_min_ms: Some(median_ms),
                mean_ms: median_ms,
                interval_ms: median_interval(&samples).map(|(low, high)| [low, high]),
                timing,
                load: self.load,
                profiling: profiles.then_some(self.profiling),
                other_load_cores: Some(self.other_load_cores),
                window: timing,
                spread_percent: spread_percent(&samples),
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
    search_from(script, user, budget_s, None)
}

/// As `search`, the search taken from `recorded` where that is usable.
pub fn search_from(
    script: &mut Scripted,
    user: &[EngineOption],
    budget_s: u64,
    recorded: Option<RecordedSearch>,
) -> Tuning {
    let options = TuneOptions {
        budget: Duration::from_secs(budget_s),
        given: user.to_vec(),
        rules: Rules::default(),
    };
    Search::start(script, &options, &mut Quiet)
        .unwrap()
        .run(singles_of(user), recorded)
        .unwrap()
}

/// `tuning`'s search (of the user's options `user`) as its record keeps it, read back.
pub fn record_of(tuning: &Tuning, user: &[EngineOption]) -> RecordedSearch {
    let singles = singles_of(user);
    let record = SearchRecord::of(tuning, &singles, "key".into()).expect("a search measured now is recorded");
    SearchRecord::read(&record.to_bytes(), "key", &singles).expect("a record reads back under its key")
}

fn singles_of(user: &[EngineOption]) -> Vec<EngineOption> {
    singles(user, crate::engine::Device::Cpu, 2)
}
