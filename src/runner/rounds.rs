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

use super::timing::{median, Timing, TimingReport};
use crate::supervise::command::MgeCommand;
use crate::supervise::parent::{Failure, How, Interrupted, Muted, Next, Supervisor};

/// A contender's timed runs in one child: their median and its 95% confidence interval.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub median_ms: f64,
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
}

impl Measured {
    fn of(timing: &Timing) -> Measured {
        Measured {
            median_ms: timing.median,
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

    /// Faster beyond the noise: this interval lies wholly below `other`'s.
    pub fn beats(&self, other: &Measured) -> bool {
        match (self.interval_ms, other.interval_ms) {
            (Some([_, high]), Some([low, _])) => high < low,
            _ => false,
        }
    }
}

/// How a timed child ended.
pub enum TimedRun {
    Measured(Measured),
    /// It exited with an error, with its message if it said one.
    Failed(Option<String>),
    /// The engine took the process down, or it was stopped at its deadline.
    Died(Failure),
}

/// Runs `command`, an `mge run` with `MgeCommand::measured`, supervised
/// until `deadline`, and reads its timed runs from its report. Its report
/// and what it says are not passed on; an interruption is the caller's error.
pub fn timed_child(command: &MgeCommand, deadline: Option<(Instant, Duration)>) -> Result<TimedRun> {
    let mut child = Supervisor::spawn(command, false, true)?;
    let mut report = String::new();
    let ended = loop {
        match child.next(deadline, &mut Muted) {
            Next::Reply(line) => {
                report.push_str(&line);
                report.push('\n');
            }
            ended => break ended,
        }
    };
    Ok(match ended {
        Next::Exited(0) => {
            let timed: TimingReport = serde_json::from_str(&report)
                .context("the run's JSON report has no timing_ms as `mge run --json` writes it")?;
            TimedRun::Measured(Measured::of(&timed.timing_ms))
        }
        Next::Exited(_) => TimedRun::Failed(child.error().map(str::to_string)),
        Next::Failed(failure) => match failure.how {
            How::Interrupted(signal) => return Err(Interrupted(signal).into()),
            _ => TimedRun::Died(failure),
        },
        Next::Reply(_) => unreachable!("replies are read in the loop above"),
    })
}

/// The contenders of `back_to_back`, and how each is measured.
pub trait Lineup {
    /// How many contenders take a turn in each round.
    fn contenders(&self) -> usize;
    /// Whether another round may start (a budget may have no room for it).
    fn room_for_a_round(&self) -> bool {
        true
    }
    /// Measures contender `at` (its place in the lineup) once; `None` when it
    /// was not measured, which ends the rounds.
    fn measure(&mut self, at: usize) -> Result<Option<Measured>>;
}

/// Up to `most` rounds in which every contender of `lineup` is measured
/// once: in lineup order in the first round, in reverse in the second, and
/// so on (A B, B A, A B, ...), so that neither a load that grows or fades
/// nor the place right after another favours one. Each whole round's
/// measurements, in lineup order. Stops when the lineup has no room for
/// another round, or at the first contender not measured (its round is dropped).
pub fn back_to_back(lineup: &mut (impl Lineup + ?Sized), most: usize) -> Result<Vec<Vec<Measured>>> {
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
    }
    Ok(rounds)
}

/// The median of a contender's medians, one per round: what it gave back to back.
pub fn median_of_rounds<'a>(rounds: impl IntoIterator<Item = &'a Measured>) -> f64 {
    median(&rounds.into_iter().map(|round| round.median_ms).collect::<Vec<_>>())
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

    fn measured(median_ms: f64) -> Measured {
        Measured {
            median_ms,
            mean_ms: median_ms,
            interval_ms: None,
            timing: Duration::ZERO,
            load: Duration::ZERO,
            profiling: None,
        }
    }

    impl Lineup for Scripted {
        fn contenders(&self) -> usize {
            self.count
        }

        fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
            self.turns.push(at);
            let turn = self.turns.iter().filter(|turn| **turn == at).count();
            Ok((self.fails != Some((at, turn))).then(|| measured(at as f64)))
        }
    }

    #[test]
    fn rounds_alternate_their_order_and_keep_the_lineups() {
        let mut lineup = Scripted {
            count: 3,
            turns: Vec::new(),
            fails: None,
        };
        let rounds = back_to_back(&mut lineup, 3).unwrap();
        assert_eq!(lineup.turns, [0, 1, 2, 2, 1, 0, 0, 1, 2]);
        assert_eq!(rounds.len(), 3);
        for round in &rounds {
            let medians: Vec<f64> = round.iter().map(|turn| turn.median_ms).collect();
            assert_eq!(medians, [0.0, 1.0, 2.0]);
        }
        assert_eq!(median_of_rounds(rounds.iter().map(|round| &round[2])), 2.0);
    }

    #[test]
    fn a_contender_not_measured_ends_the_rounds_without_its_own() {
        let mut lineup = Scripted {
            count: 2,
            turns: Vec::new(),
            fails: Some((0, 2)),
        };
        let rounds = back_to_back(&mut lineup, 10).unwrap();
        assert_eq!(rounds.len(), 1);
        assert_eq!(lineup.turns, [0, 1, 1, 0]);
    }
}
