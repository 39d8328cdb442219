//! What a candidate costs of the budget: the estimate that decides whether it
//! is tried, and the deadline that stops it.

use std::time::Duration;

use super::candidate::Candidate;
use crate::options::EngineOption;

/// A candidate may take this many times what the baseline's process took
/// (start, load, warm-up and timed runs), and at least `TRIAL_FLOOR`: one that
/// hangs costs that, never the rest of the budget.
pub const TRIAL_FACTOR: f64 = 10.0;
pub const TRIAL_FLOOR: Duration = Duration::from_secs(20);

/// Fast-run and the global layout transform profile kernels while the model
/// loads, which the baseline's time does not show: their deadline allows this
/// many of the baseline's forward runs more.
pub const PROFILING_RUNS: f64 = 4000.0;

/// Before any profiling was measured, fast-run's is estimated at this many of
/// the baseline's forward runs (ResNet-18's took 1500 to 3000 here).
const PROFILING_RUNS_GUESS: f64 = 2000.0;

/// What the baseline took, from which every other cost is reckoned.
pub struct Costs {
    /// The baseline's measured process, start to end.
    pub baseline: Duration,
    pub baseline_ms: f64,
    /// What fast-run's profiling took, once a trial did it.
    pub profiling: Option<Duration>,
    /// Fast-run's cache holds what the model's operators need (a fast-run trial wrote it).
    pub fast_run_cached: bool,
}

impl Costs {
    /// Does fast-run profile in this candidate? Not when the cache covers its
    /// operators: a layout changes them, so with one it profiles again.
    pub fn profiles(&self, candidate: &Candidate) -> bool {
        let relayout = candidate
            .0
            .iter()
            .any(|option| matches!(option, EngineOption::Layout(_) | EngineOption::LayoutTransform(_)));
        candidate.has(&EngineOption::FastRun) && (relayout || !self.fast_run_cached)
    }

    /// About how long trying `candidate` takes.
    pub fn estimate(&self, candidate: &Candidate) -> Duration {
        match self.profiles(candidate) {
            true => self.baseline + self.profiling_estimate(),
            false => self.baseline,
        }
    }

    fn profiling_estimate(&self) -> Duration {
        self.profiling
            .unwrap_or_else(|| Duration::from_secs_f64(PROFILING_RUNS_GUESS * self.baseline_ms / 1e3))
    }

    /// How long `candidate` may take before it is stopped.
    pub fn allowance(&self, candidate: &Candidate) -> Duration {
        let plain = self.baseline.mul_f64(TRIAL_FACTOR).max(TRIAL_FLOOR);
        match candidate.profiles_at_load() {
            true => plain + Duration::from_secs_f64(PROFILING_RUNS * self.baseline_ms / 1e3),
            false => plain,
        }
    }

    /// Why a candidate its own deadline stopped was not measured.
    pub fn overran(&self, candidate: &Candidate) -> String {
        let mut reason = format!(
            "stopped at its deadline, {:.1} s: {TRIAL_FACTOR}x the baseline's {:.1} s (at least {} s)",
            self.allowance(candidate).as_secs_f64(),
            self.baseline.as_secs_f64(),
            TRIAL_FLOOR.as_secs()
        );
        if candidate.profiles_at_load() {
            reason += &format!(", plus {PROFILING_RUNS} forward runs for profiling at load");
        }
        reason
    }
}

/// Why a trial the budget's end stopped was not measured.
pub fn budget_ran_out(took: Duration) -> String {
    format!("stopped after {:.1} s, when the --budget ran out", took.as_secs_f64())
}
