//! Two runs timed against each other: each side an `mge run` child of its own
//! per round, the sides taking turns (A B, B A, ...) in `--rounds` rounds
//! (`runner::rounds`), as tune confirms its winners.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::by_op;
use super::runs::TwoRuns;
use crate::cli::TwoRunArgs;
use crate::commands::Global;
use crate::mge_command::MgeCommand;
use crate::report::compare::TimingComparison;
use crate::runner::rounds::{back_to_back, timed_child, Lineup, Measured, TimedRun};

/// Rounds when `--rounds` is not given: the fewest whose interval leaves out
/// one stray round on either side (the 2nd and 9th of 10 ratios).
const DEFAULT_ROUNDS: u64 = 10;

/// Untimed runs of each side in each round: the first runs allocate and fill caches.
const WARMUP: usize = 2;

/// Each side's timed runs in a round stop after this long or this many runs,
/// whichever comes first: a model of a millisecond gets 500, one of a hundred
/// milliseconds 5. Rounds, not runs, narrow the interval: runs in one process
/// share its luck.
const ROUND_TIME: Duration = Duration::from_millis(500);
const ROUND_RUNS: u64 = 500;

/// How two runs are timed.
pub struct TimingSettings {
    pub rounds: usize,
    /// `--max-slowdown PCT`: B slower than A beyond it fails the check.
    pub max_slowdown: Option<f64>,
    /// `--by-op N`: the operators whose time changed most, profiled after the timed rounds.
    pub by_op: Option<usize>,
}

impl TimingSettings {
    /// `None` with `--no-timing`, and with `--b-naive` (said once): megdnn's
    /// naive kernels are a reference for outputs, far slower than any run timed against them.
    pub fn from_args(runs: &TwoRunArgs, global: &Global) -> Option<TimingSettings> {
        if runs.no_timing {
            return None;
        }
        if runs.b_naive {
            global.note(
                "--b-naive: the runs are not timed (megdnn's naive kernels are a reference for outputs, not for speed)",
            );
            return None;
        }
        Some(TimingSettings {
            rounds: runs.rounds.unwrap_or(DEFAULT_ROUNDS) as usize,
            max_slowdown: runs.max_slowdown,
            by_op: runs.by_op.map(|top| usize::try_from(top).unwrap_or(usize::MAX)),
        })
    }
}

/// Both sides timed on `models` (A's and B's) in `settings.rounds` rounds,
/// held against each other; or the one line that says which side failed and how.
pub fn time_pair(
    two: &TwoRuns,
    models: [&Path; 2],
    settings: &TimingSettings,
) -> Result<std::result::Result<Option<TimingComparison>, String>> {
    let started = Instant::now();
    let mut pair = TimedPair {
        commands: [0, 1].map(|at| {
            // A container is timed on the feeds, or #rand: not on its testcases, which `run` checks instead.
            two.command(at, MgeCommand::run(models[at]))
                .no_testcase()
                .verbose(false)
                .measured(WARMUP, ROUND_RUNS, ROUND_TIME)
        }),
        what: [0, 1].map(|at| format!("run {} ({})", two.runs[at].name, two.side(at, models[at]).describe())),
        timeout: two.timeout,
        failure: None,
    };
    let rounds = back_to_back(&mut pair, settings.rounds)?;
    let seconds = started.elapsed().as_secs_f64();
    if let Some(failure) = pair.failure {
        return Ok(Err(failure));
    }
    let mut comparison = TimingComparison::new(&rounds, settings.max_slowdown, seconds);
    if let (Some(top), Some(timing)) = (settings.by_op, comparison.as_mut()) {
        let difference = timing.b_ms - timing.a_ms;
        match by_op::attribute(two, models, timing.rounds, top, Some(difference))? {
            Ok(by_op) => timing.by_op = Some(by_op),
            Err(failure) => return Ok(Err(failure)),
        }
    }
    Ok(Ok(comparison))
}

/// The two sides' timed children, and why one was not measured.
struct TimedPair {
    commands: [MgeCommand; 2],
    what: [String; 2],
    timeout: Option<Duration>,
    failure: Option<String>,
}

impl Lineup for TimedPair {
    fn contenders(&self) -> usize {
        2
    }

    fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
        let deadline = self.timeout.map(|limit| (Instant::now() + limit, limit));
        let why = match timed_child(&self.commands[at], deadline)? {
            TimedRun::Measured(measured) => return Ok(Some(measured)),
            TimedRun::Failed(reason) => reason,
            TimedRun::Died(failure) => failure.one_line(),
        };
        self.failure = Some(format!("{}, timed: {why}", self.what[at]));
        Ok(None)
    }
}
