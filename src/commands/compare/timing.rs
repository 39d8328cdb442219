//! Two runs timed against each other: each side an `mge run` child of its own
//! per round, the sides taking turns (A B, B A, ...), in `--rounds` rounds or
//! until the rounds decide B/A's verdict (`runner::sequential`), as tune
//! confirms its winners.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::by_op;
use super::two_runs::TwoRuns;
use crate::cli::TwoRunArgs;
use crate::mge_command::MgeCommand;
use crate::options::cpu_time_fair;
use crate::report::compare::timing::TimingComparison;
use crate::report::progress::RoundsProgress;
use crate::runner::rounds::{machine_loaded_now, timed_child, Lineup, Measure, Measured};
use crate::runner::sequential::{rounds_until_decided, Looks, RoundsPlan, MIN_EFFECT_PERCENT};
use crate::settings::Global;

/// Looks at the rounds when `--rounds` does not fix them: after 8, 16, 32
/// and 64 rounds (`Looks::doubling`), each at 98.75%.
const LOOKS: u32 = 4;

/// The time the rounds of a pair may take when `--timing-budget` is not given.
const TIMING_BUDGET: Duration = Duration::from_secs(60);

/// Untimed runs of each side in each round: the first runs allocate and fill caches.
const WARMUP: usize = 2;

/// Each side's timed runs in a round last this long, however short a run
/// (a model of a millisecond gets 500 runs, one of a hundred milliseconds 5,
/// one of 15 µs some 30,000): the first milliseconds of a process run a
/// short model at half speed or slower now and then (its engine's threads
/// still settling), and a window of a few of them made a 15 µs model
/// against itself read `slower`. Long enough, too, for /proc's ticks to
/// measure the load meanwhile. Rounds, not runs, narrow the interval: runs
/// in one process share its luck.
const ROUND_TIME: Duration = Duration::from_millis(500);

/// How two runs are timed.
pub struct TimingSettings {
    /// When the rounds are looked at: `--rounds`' one look, or the doubling looks.
    pub looks: Looks,
    /// `--timing-budget`; `None` with `--rounds`.
    pub budget: Option<Duration>,
    /// `--min-effect`, in percent (`MIN_EFFECT_PERCENT` unless given): the
    /// pair's verdict and each operator's of `--by-op`.
    pub min_effect: f64,
    /// `--max-slowdown PCT`: B `slower` than A beyond it fails the check.
    pub max_slowdown: Option<f64>,
    /// No progress on the terminal (`-q`).
    pub quiet: bool,
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
        let (looks, budget) = match runs.rounds {
            Some(rounds) => (Looks::fixed(rounds as usize), None),
            None => (
                Looks::doubling(LOOKS, 1),
                Some(runs.timing_budget.unwrap_or(TIMING_BUDGET)),
            ),
        };
        Some(TimingSettings {
            looks,
            budget,
            min_effect: runs.min_effect.unwrap_or(MIN_EFFECT_PERCENT),
            max_slowdown: runs.max_slowdown,
            quiet: global.quiet,
            by_op: runs.by_op.map(|top| usize::try_from(top).unwrap_or(usize::MAX)),
        })
    }

    /// How the rounds are said in a note: `10 rounds`, `until decided, 60 s at most`.
    pub fn describe(&self) -> String {
        match self.budget {
            Some(budget) => format!(
                "rounds until the verdict is decided ({} at most, {} s at most)",
                self.looks.most(),
                budget.as_secs_f64()
            ),
            None => format!("{} rounds", self.looks.most()),
        }
    }
}

/// Both sides timed on `models` (A's and B's), in rounds until decided or
/// as many as fixed, held against each other; or the one line that says
/// which side failed and how. `pair` names them on the progress line.
pub fn time_pair(
    two: &TwoRuns,
    models: [&Path; 2],
    settings: &TimingSettings,
    pair: &str,
) -> Result<std::result::Result<Option<TimingComparison>, String>> {
    let mut sides = TimedPair {
        commands: [0, 1].map(|at| two.command(at, timed_run(models[at]))),
        what: [0, 1].map(|at| format!("run {} ({})", two.runs[at].name, two.side(at, models[at]).describe())),
        timeout: two.timeout,
        failure: None,
    };
    let plan = RoundsPlan {
        looks: settings.looks.clone(),
        min_effect_percent: settings.min_effect,
        precision: None,
        budget: settings.budget,
        budget_flag: "--timing-budget",
        pairs: vec![(0, 1)],
        measure: Measure::before_rounds(
            cpu_time_fair(&two.runs[0].options, &two.runs[1].options),
            machine_loaded_now,
        ),
    };
    let mut progress = RoundsProgress::new(pair, &plan, settings.quiet);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let outcome = rounds_until_decided(&mut sides, &plan, cores, |rounds| {
        progress.round(rounds, plan.measure(rounds))
    })?;
    drop(progress);
    if let Some(failure) = sides.failure {
        return Ok(Err(failure));
    }
    let mut comparison = TimingComparison::new(&outcome, &plan, settings.max_slowdown);
    if let (Some(top), Some(timing)) = (settings.by_op, comparison.as_mut()) {
        let difference = timing.b_ms - timing.a_ms;
        match by_op::attribute(two, models, timing.rounds, top, Some(difference), settings.min_effect)? {
            Ok(by_op) => timing.by_op = Some(by_op),
            Err(failure) => return Ok(Err(failure)),
        }
    }
    Ok(Ok(comparison))
}

/// A side's timed child in one round, before the side's feeds and options.
fn timed_run(model: &Path) -> MgeCommand {
    // A container is timed on the feeds, or #rand: not on its testcases, which `run` checks instead.
    MgeCommand::run(model)
        .no_testcase()
        .verbose(false)
        .measured_for(WARMUP, ROUND_TIME)
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

    fn hold_on(&mut self, measure: Measure) {
        self.commands = self.commands.clone().map(|command| measure.timed_command(command));
    }

    fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
        let deadline = self.timeout.map(|limit| (Instant::now() + limit, limit));
        let why = match timed_child(&self.commands[at], deadline)? {
            Ok(measured) => return Ok(Some(measured)),
            Err(outcome) => outcome.to_string(),
        };
        self.failure = Some(format!("{}, timed: {why}", self.what[at]));
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    /// However short a run, a side's timed runs fill the round's time: a
    /// window of a few milliseconds fell in the process's unsettled start.
    #[test]
    fn each_side_is_timed_for_the_whole_round_time() {
        let command = timed_run(Path::new("m.mge"));
        let args: Vec<String> = command.args().map(|arg| arg.to_string_lossy().into_owned()).collect();
        for expected in ["--warmup=2", "--iter=1", "--duration=0.5"] {
            assert!(args.iter().any(|arg| arg == expected), "{args:?}");
        }
        assert!(!args.iter().any(|arg| arg.starts_with("--max-duration")), "{args:?}");
    }

    /// Rounds held on CPU time run both sides with the engine's worker
    /// sleeping when idle: its spin would be counted as their work.
    #[test]
    fn rounds_on_cpu_time_run_both_sides_with_the_worker_sleeping_when_idle() {
        let pair = || TimedPair {
            commands: [0, 1].map(|_| timed_run(Path::new("m.mge"))),
            what: [0, 1].map(|at| at.to_string()),
            timeout: None,
            failure: None,
        };
        let spins = |pair: &TimedPair| {
            pair.commands.each_ref().map(|command| {
                command
                    .env()
                    .any(|(name, value)| name == "MGB_WORKER_MAX_SPIN" && value == "1")
            })
        };
        let mut on_wall = pair();
        on_wall.hold_on(Measure::Wall);
        assert_eq!(spins(&on_wall), [false, false]);
        let mut on_cpu = pair();
        on_cpu.hold_on(Measure::Cpu);
        assert_eq!(spins(&on_cpu), [true, true]);
    }

    /// The help's defaults are the ones the timing takes: one definition each.
    #[test]
    fn the_help_says_the_defaults_the_timing_takes() {
        let cli = Cli::command();
        let compare = cli.find_subcommand("compare").expect("mge compare");
        let help = |id: &str| {
            let arg = compare.get_arguments().find(|arg| arg.get_id() == id);
            arg.and_then(clap::Arg::get_help).expect("a help line").to_string()
        };
        let min_effect = help("min_effect");
        assert!(
            min_effect.ends_with(&format!("[default: {MIN_EFFECT_PERCENT}]")),
            "{min_effect}"
        );
        let budget = help("timing_budget");
        assert!(
            budget.ends_with(&format!("[default: {}]", TIMING_BUDGET.as_secs())),
            "{budget}"
        );
    }
}
