//! What a candidate costs of the budget: the estimate that decides whether it
//! is tried, and the deadline that stops it.

use std::time::Duration;

use super::candidate::Candidate;

/// A candidate may take this many times what the baseline's process took
/// (start, load, warm-up and timed runs), and at least `TRIAL_FLOOR`: one that
/// hangs costs that, never the rest of the budget.
pub const TRIAL_FACTOR: f64 = 10.0;
pub const TRIAL_FLOOR: Duration = Duration::from_secs(20);

/// Fast-run and the global layout transform profile kernels while the model
/// loads, which the baseline's time does not show: their deadline allows this
/// many of the baseline's forward runs more.
pub const PROFILING_RUNS: f64 = 4000.0;

/// Fast-run's profiling before anything was measured on this machine, in the
/// baseline's forward runs: ResNet-18 at 2 threads profiled for about 20 s
/// against 68 ms runs (300) on this project's 2-core AMD EPYC.
const PROFILING_RUNS_PRIOR: f64 = 400.0;

/// What fast-run's profiling cost on this machine before, as the algorithm
/// cache recorded it (`runtime::algo_cache::ModelRecord`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OnRecord {
    /// This model's, under the candidate's options.
    ThisModel(Duration),
    /// Other models', under the candidate's options: seconds of profiling
    /// per millisecond of their runs (the median over them).
    PerForwardMs(f64),
}

/// Where a fast-run candidate's estimate of its profiling comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfilingSource {
    /// A trial of this tune profiled: what it took.
    Measured,
    /// The algorithm cache's record of this model.
    ThisModel,
    /// The algorithm cache's records of other models, scaled by the baseline's run.
    OtherModels,
    /// Nothing measured on this machine yet.
    Prior,
}

/// What the baseline took, from which every other cost is reckoned.
pub struct Costs {
    /// The baseline's measured process, start to end.
    pub baseline: Duration,
    /// The baseline's calibration and trial, from the tune's start.
    pub calibrated: Duration,
    pub baseline_ms: f64,
    /// A trial of the confirmation: the baseline's process with its shorter timed runs.
    pub confirming: Duration,
    /// What fast-run's profiling took, once a trial of this tune did it.
    pub profiling: Option<Duration>,
}

impl Costs {
    /// About how long trying `candidate` takes: with fast-run's profiling
    /// where it `profiles`, estimated from `on_record` where this tune did
    /// not measure it.
    pub fn estimate(&self, profiles: bool, on_record: Option<OnRecord>) -> Duration {
        match profiles {
            true => self.baseline + self.profiling_estimate(on_record).0,
            false => self.baseline,
        }
    }

    /// Fast-run's profiling, and where the figure comes from: measured in
    /// this tune, on record on this machine, else the prior.
    pub fn profiling_estimate(&self, on_record: Option<OnRecord>) -> (Duration, ProfilingSource) {
        match (self.profiling, on_record) {
            (Some(measured), _) => (measured, ProfilingSource::Measured),
            (None, Some(OnRecord::ThisModel(took))) => (took, ProfilingSource::ThisModel),
            (None, Some(OnRecord::PerForwardMs(per_ms))) => (
                Duration::from_secs_f64(per_ms * self.baseline_ms),
                ProfilingSource::OtherModels,
            ),
            (None, None) => (
                Duration::from_secs_f64(PROFILING_RUNS_PRIOR * self.baseline_ms / 1e3),
                ProfilingSource::Prior,
            ),
        }
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
