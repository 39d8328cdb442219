//! Speeds compared across processes: each contender timed in a supervised
//! `mge run` child of its own (`timed_child`), the contenders taking turns in
//! rounds (`back_to_back`), and two of them held against each other round by
//! round (`Ratio`).
//!
//! A child per contender per round: each has its own engine, threads and
//! runtime, and a process's one-off luck (where its memory landed, which core
//! it started on) is drawn again every round instead of favouring one side
//! throughout. Turns within a round follow each other closely, so that a load
//! that comes and goes on the machine hits every contender alike.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::noise::{loaded, online_cores, other_load_over};
use super::timing::{median, median_interval_at, Timing};
use crate::mge_command::MgeCommand;
use crate::supervise::child_run::{run_child, Watch};
use crate::supervise::parent::Outcome;

/// A contender's timed runs in one child: their median and its 95% confidence interval.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Measured {
    pub median_ms: f64,
    /// The least CPU time the child used in any timed run (all its threads),
    /// where it read it for every run (`Timing::cpu_min`).
    #[serde(default)]
    pub cpu_min_ms: Option<f64>,
    /// What one run takes on average, stalls included: what sizes a trial.
    pub mean_ms: f64,
    /// `None` with fewer than 6 runs.
    pub interval_ms: Option<[f64; 2]>,
    /// The timed runs' own time, of the process's.
    pub timing: Duration,
    /// Reading and loading the model, of the process's time.
    pub load: Duration,
    /// Fast-run's profiling, where the engine profiled.
    pub profiling: Option<Duration>,
    /// The CPU time other processes used during the timed runs, in cores
    /// (`runner::noise`, as `run` measures it), and how long those runs took.
    pub other_load_cores: Option<f64>,
    pub window: Duration,
    /// The runs' spread, 10th to 90th percentile in percent of their median.
    pub spread_percent: Option<f64>,
}

/// What a timed child's JSON report holds that the rounds read.
#[derive(Deserialize)]
struct TimedReport {
    timing_ms: Timing,
    noise: Option<NoiseFigures>,
}

#[derive(Deserialize)]
struct NoiseFigures {
    window_s: f64,
    other_load_cores: Option<f64>,
    spread_percent: Option<f64>,
}

impl Measured {
    /// A contender's timed runs, with nothing known of the machine meanwhile.
    pub fn of(timing: &Timing) -> Measured {
        Measured {
            other_load_cores: None,
            spread_percent: None,
            window: Duration::ZERO,
            median_ms: timing.median,
            cpu_min_ms: timing.cpu_min,
            mean_ms: timing.mean,
            interval_ms: timing.median_ci95,
            timing: Duration::from_secs_f64(timing.mean * timing.iterations as f64 / 1e3),
            load: Duration::from_secs_f64(timing.cold_start.as_ref().map_or(0.0, |cold| cold.load) / 1e3),
            profiling: timing
                .cold_start
                .as_ref()
                .and_then(|cold| cold.profiling)
                .map(|ms| Duration::from_secs_f64(ms / 1e3)),
        }
    }

    /// A timed child's runs, with the load and spread it measured.
    fn reported(report: &TimedReport) -> Measured {
        let noise = report.noise.as_ref();
        Measured {
            other_load_cores: noise.and_then(|noise| noise.other_load_cores),
            spread_percent: noise.and_then(|noise| noise.spread_percent),
            window: Duration::from_secs_f64(noise.map_or(0.0, |noise| noise.window_s.max(0.0))),
            ..Measured::of(&report.timing_ms)
        }
    }

    /// Faster beyond the noise: this interval lies wholly below `other`'s.
    pub fn beats(&self, other: &Measured) -> bool {
        match (self.interval_ms, other.interval_ms) {
            (Some([_, high]), Some([low, _])) => high < low,
            _ => false,
        }
    }
}

/// Runs `command`, an `mge run` with `MgeCommand::measured`, supervised
/// until `deadline`, and reads its timed runs and the load meanwhile from
/// its report; or how it ended without one. What it says is not passed on;
/// an interruption is the caller's error.
pub fn timed_child(
    command: &MgeCommand,
    deadline: Option<(Instant, Duration)>,
) -> Result<std::result::Result<Measured, Outcome>> {
    let ran = run_child(
        command,
        Watch {
            deadline,
            ..Watch::reporting(None, false)
        },
    )?;
    if !matches!(ran.outcome, Outcome::Ran) {
        return Ok(Err(ran.outcome));
    }
    let timed: TimedReport = serde_json::from_str(&ran.report)
        .context("the run's JSON report has no timing_ms as `mge run --json` writes it")?;
    Ok(Ok(Measured::reported(&timed)))
}

/// The contenders of `back_to_back`, and how each is measured.
pub trait Lineup {
    /// How many contenders take a turn in each round.
    fn contenders(&self) -> usize;
    /// The clock the rounds' time is taken by (a test's may be virtual).
    fn now(&self) -> Instant {
        Instant::now()
    }
    /// Whether another round may start (a budget may have no room for it).
    fn room_for_a_round(&mut self) -> bool {
        true
    }
    /// Measures contender `at` (its place in the lineup) once; `None` when it
    /// was not measured, which ends the rounds.
    fn measure(&mut self, at: usize) -> Result<Option<Measured>>;
    /// Runs the contenders as `measure` needs from now on: told once, before the rounds.
    fn hold_on(&mut self, _measure: Measure) {}
}

/// Up to `most` rounds in which every contender of `lineup` is measured
/// once: in lineup order in the first round, in reverse in the second, and
/// so on (A B, B A, A B, ...), so that neither a load that grows or fades
/// nor the place right after another favours one. Each whole round's
/// measurements, in lineup order. Stops when `enough` says so of the rounds
/// so far (after each round), when the lineup has no room for another
/// round, or at the first contender not measured (its round is dropped).
pub fn back_to_back(
    lineup: &mut (impl Lineup + ?Sized),
    most: usize,
    mut enough: impl FnMut(&[Vec<Measured>]) -> bool,
) -> Result<Vec<Vec<Measured>>> {
    let count = lineup.contenders();
    let mut rounds = Vec::new();
    while rounds.len() < most && lineup.room_for_a_round() {
        let mut order: Vec<usize> = (0..count).collect();
        if rounds.len() % 2 == 1 {
            order.reverse();
        }
        let mut round: Vec<Option<Measured>> = vec![None; count];
        for at in order {
            match lineup.measure(at)? {
                Some(measured) => round[at] = Some(measured),
                None => return Ok(rounds),
            }
        }
        rounds.push(round.into_iter().flatten().collect());
        if enough(&rounds) {
            break;
        }
    }
    Ok(rounds)
}

/// What the rounds hold contenders against each other on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Each run's wall time, forward+wait: what a user waits for. Another
    /// process on the machine lengthens it by whatever share of the cores it takes.
    Wall,
    /// The least CPU time the child used in any of its runs, all its
    /// threads, with the engine's worker thread sleeping as soon as it has no
    /// task (`MgeCommand::workers_sleep_when_idle`): the engine's work, which
    /// other processes barely move (ResNet-18 at 1 thread on 2 cores: wall
    /// 124 ms quiet, 186 ms beside two busy processes; CPU 131 and 125 ms).
    /// The worker's default spin between tasks would count, and beside busy
    /// processes it spins through its whole time slice while the thread that
    /// hands it the tasks waits for a core: a model of 1.1 ms took 8 ms of CPU
    /// a run, the same as one with 40% more work. Blind to what changes only
    /// the waiting (more threads, a device), so it holds only sides that run
    /// alike in those.
    Cpu,
}

impl Measure {
    /// A contender's figure of this measure in one child: its runs' median
    /// wall time, or their least CPU time. The CPU time of a child that could not read it is NaN, which no
    /// interval holds (`Measure::read_by`).
    pub fn of(self, measured: &Measured) -> f64 {
        match self {
            Measure::Wall => measured.median_ms,
            Measure::Cpu => measured.cpu_min_ms.unwrap_or(f64::NAN),
        }
    }

    /// Whether every turn of `rounds` has this measure's figure, long enough
    /// to hold a verdict on (`MIN_CPU_MS`).
    pub fn read_by(self, rounds: &[Vec<Measured>]) -> bool {
        rounds.iter().flatten().all(|turn| match self {
            Measure::Wall => self.of(turn).is_finite(),
            Measure::Cpu => self.of(turn) >= MIN_CPU_MS,
        })
    }

    /// What rounds about to start are held on: CPU time where the contenders
    /// run alike in what it cannot see (`cpu_time_fair`) and other processes
    /// load the machine (`loaded_now`, asked only then); wall time otherwise.
    /// Chosen before the rounds, since their children run differently on
    /// each (`Lineup::hold_on`), and never from their ratios.
    pub fn before_rounds(cpu_time_fair: bool, loaded_now: impl FnOnce() -> bool) -> Measure {
        match cpu_time_fair && loaded_now() {
            true => Measure::Cpu,
            false => Measure::Wall,
        }
    }

    /// A timed child's `command` as rounds held on this measure run it: on
    /// CPU time, with the engine's worker sleeping when idle.
    pub fn timed_command(self, command: MgeCommand) -> MgeCommand {
        match self {
            Measure::Wall => command,
            Measure::Cpu => command.workers_sleep_when_idle(),
        }
    }

    /// As the text says it: `wall time`, `CPU time`.
    pub fn said(self) -> &'static str {
        match self {
            Measure::Wall => "wall time",
            Measure::Cpu => "CPU time",
        }
    }
}

/// The shortest run whose CPU time the rounds are held on: the process's CPU
/// clock is read by a system call (no vDSO) before and after each run, about
/// a microsecond, a tenth of a 10 µs run. Beside two busy processes on 2
/// cores, a 19 µs model against itself was `same`, [0.988, 1.016].
const MIN_CPU_MS: f64 = 0.01;

/// How long `machine_loaded_now` looks: 50 of `/proc`'s ticks a core.
const LOAD_PROBE: Duration = Duration::from_millis(500);

/// Whether other processes load the machine now, over `LOAD_PROBE`: what
/// `Measure::before_rounds` asks of a real machine.
pub fn machine_loaded_now() -> bool {
    other_load_over(LOAD_PROBE).is_some_and(|load| loaded(load, online_cores()))
}

/// The median of a contender's figures of `measure` (`Measure::of`), one per round: what it gave back to back.
pub fn median_of_rounds<'a>(rounds: impl IntoIterator<Item = &'a Measured>, measure: Measure) -> f64 {
    median(&rounds.into_iter().map(|round| measure.of(round)).collect::<Vec<_>>())
}

/// Two contenders held against each other over their rounds: each round's
/// ratio of B's median to A's, and the median of those ratios with its
/// confidence interval (`timing::median_interval_at`: order statistics of
/// the ratios, free of any assumption about their distribution but that the
/// rounds are independent). With too few rounds for the confidence asked,
/// the ratios' whole range, which holds the median with 1 - 2^(1-n) (3
/// rounds: 75%).
///
/// Rounds, not runs, are the unit: runs in one process share its luck and
/// are not independent. A ratio within a round cancels what the machine did
/// to both turns alike; taking order statistics of the ratios, one round
/// hit by a burst of load moves the interval by one rank, not by its size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ratio {
    /// The median of the rounds' ratios, B/A.
    pub estimate: f64,
    /// Two order statistics of the ratios: the interval at the confidence
    /// asked for where the rounds give one, the whole range below; `None`
    /// from one round.
    pub interval: Option<[f64; 2]>,
    /// The chance that `interval` holds the true median.
    pub confidence: f64,
}

impl Ratio {
    /// Contender `b` against `a` over `rounds` on `measure`, at
    /// `confidence`: the ratio of B's median to A's in each round; `None`
    /// for no rounds.
    pub fn of(rounds: &[Vec<Measured>], a: usize, b: usize, confidence: f64, measure: Measure) -> Option<Ratio> {
        let ratios: Vec<f64> = rounds
            .iter()
            .map(|round| measure.of(&round[b]) / measure.of(&round[a]))
            .collect();
        if ratios.is_empty() {
            return None;
        }
        let estimate = median(&ratios);
        if let Some((low, high)) = median_interval_at(&ratios, confidence) {
            return Some(Ratio {
                estimate,
                interval: Some([low, high]),
                confidence,
            });
        }
        let rounds = ratios.len() as i32;
        let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Ratio {
            estimate,
            interval: (rounds > 1).then_some([low, high]),
            confidence: 1.0 - 2f64.powi(1 - rounds),
        })
    }

    /// The interval, where it holds the median with `confidence` at least:
    /// what a verdict needs.
    pub fn interval_at(&self, confidence: f64) -> Option<[f64; 2]> {
        self.interval.filter(|_| self.confidence >= confidence)
    }
}

/// A contender measured at `median_ms`, every run alike, on a quiet machine: for tests.
#[cfg(test)]
pub fn measured_at(median_ms: f64) -> Measured {
    Measured {
        median_ms,
        cpu_min_ms: Some(median_ms),
        mean_ms: median_ms,
        interval_ms: None,
        timing: Duration::ZERO,
        load: Duration::ZERO,
        profiling: None,
        other_load_cores: Some(0.0),
        window: Duration::from_millis(500),
        spread_percent: Some(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contenders whose median is their place in the lineup; `fails` is not
    /// measured on its `fails_on`th turn (from 1).
    struct Scripted {
        count: usize,
        turns: Vec<usize>,
        fails: Option<(usize, usize)>,
    }

    impl Lineup for Scripted {
        fn contenders(&self) -> usize {
            self.count
        }

        fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
            self.turns.push(at);
            let turn = self.turns.iter().filter(|turn| **turn == at).count();
            Ok((self.fails != Some((at, turn))).then(|| measured_at(at as f64)))
        }
    }

    #[test]
    fn rounds_alternate_their_order_and_keep_the_lineups() {
        let mut lineup = Scripted {
            count: 3,
            turns: Vec::new(),
            fails: None,
        };
        let rounds = back_to_back(&mut lineup, 3, |_| false).unwrap();
        assert_eq!(lineup.turns, [0, 1, 2, 2, 1, 0, 0, 1, 2]);
        assert_eq!(rounds.len(), 3);
        for round in &rounds {
            let medians: Vec<f64> = round.iter().map(|turn| turn.median_ms).collect();
            assert_eq!(medians, [0.0, 1.0, 2.0]);
        }
        assert_eq!(
            median_of_rounds(rounds.iter().map(|round| &round[2]), Measure::Wall),
            2.0
        );
    }

    #[test]
    fn the_rounds_stop_once_they_are_enough() {
        let mut lineup = Scripted {
            count: 2,
            turns: Vec::new(),
            fails: None,
        };
        let rounds = back_to_back(&mut lineup, 10, |rounds| rounds.len() == 4).unwrap();
        assert_eq!((rounds.len(), lineup.turns.len()), (4, 8));
    }

    /// Rounds of A at 10 ms and B at 10 ms times each of `ratios`.
    fn rounds_of(ratios: &[f64]) -> Vec<Vec<Measured>> {
        ratios
            .iter()
            .map(|ratio| vec![measured_at(10.0), measured_at(10.0 * ratio)])
            .collect()
    }

    fn ratio(ratios: &[f64]) -> Ratio {
        Ratio::of(&rounds_of(ratios), 0, 1, 0.95, Measure::Wall).unwrap()
    }

    #[test]
    fn the_ratio_is_the_median_of_the_rounds_with_the_order_statistics_around_it() {
        // Ten rounds: the interval is the 2nd and 9th of the sorted ratios.
        let ten = [1.3, 0.9, 1.2, 1.25, 1.1, 1.4, 1.15, 1.35, 2.0, 1.22];
        let got = ratio(&ten);
        assert!((got.estimate - 1.235).abs() < 1e-12, "{got:?}");
        let [low, high] = got.interval.unwrap();
        assert!((low - 1.1).abs() < 1e-12 && (high - 1.4).abs() < 1e-12, "{got:?}");
        assert_eq!(got.interval_at(0.95), got.interval);
        assert!(Ratio::of(&[], 0, 1, 0.95, Measure::Wall).is_none());
        // At 98.75% ten rounds give the 1st and the 10th.
        let wider = Ratio::of(&rounds_of(&ten), 0, 1, 0.9875, Measure::Wall).unwrap();
        assert_eq!(wider.interval, Some([0.9, 2.0]));
        // Below 6 rounds there is no 95% interval: the range, which holds
        // the median with 1 - 2^(1-n).
        let five = ratio(&[2.0, 2.5, 1.5, 2.0, 3.0]);
        assert_eq!(five.interval_at(0.95), None);
        assert_eq!(five.interval, Some([1.5, 3.0]));
        assert_eq!(five.confidence, 1.0 - 1.0 / 16.0);
        assert_eq!(ratio(&[2.0]).interval, None);
    }

    #[test]
    fn a_contender_not_measured_ends_the_rounds_without_its_own() {
        let mut lineup = Scripted {
            count: 2,
            turns: Vec::new(),
            fails: Some((0, 2)),
        };
        let rounds = back_to_back(&mut lineup, 10, |_| false).unwrap();
        assert_eq!(rounds.len(), 1);
        assert_eq!(lineup.turns, [0, 1, 1, 0]);
    }
}
