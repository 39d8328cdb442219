//! `mge tune`'s table, its JSON document and the command line of the winner.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::runner::rounds::Measured;
use crate::supervise::command::MgeCommand;
use crate::tune::trial::Status;
use crate::tune::{Confirmation, Contender, Row, Skipped, Tuning};

#[derive(Serialize)]
pub struct TuneReport {
    pub baseline: Baseline,
    pub best: Best,
    /// Every candidate tried, the baseline first among them.
    pub candidates: Vec<CandidateReport>,
    /// Candidates not tried, and why.
    pub untried: Vec<UntriedReport>,
    pub confirmation: Option<ConfirmationReport>,
    /// The budget and what the search used of it, in seconds.
    pub budget_s: f64,
    pub used_s: f64,
}

#[derive(Serialize)]
pub struct Baseline {
    pub options: String,
    pub median_ms: f64,
    pub ci95_ms: Option<[f64; 2]>,
}

#[derive(Serialize)]
pub struct Best {
    pub options: String,
    pub median_ms: f64,
    pub ci95_ms: Option<[f64; 2]>,
    pub speedup: f64,
    pub command: String,
}

#[derive(Serialize)]
pub struct CandidateReport {
    pub options: String,
    pub median_ms: Option<f64>,
    /// The median's 95% confidence interval (order statistics of the runs).
    pub ci95_ms: Option<[f64; 2]>,
    pub speedup: Option<f64>,
    pub err: Option<f64>,
    pub status: Status,
    /// Its interval lies wholly below the baseline's.
    pub beats_baseline: bool,
    /// Its interval lies wholly above the baseline's.
    pub slower_than_baseline: bool,
    pub reason: Option<String>,
    /// What it cost of the budget: its whole process, and within that its
    /// model's load, fast-run's profiling and its timed runs.
    pub seconds: f64,
    pub load_s: Option<f64>,
    pub profiling_s: Option<f64>,
    pub timed_s: Option<f64>,
}

#[derive(Serialize)]
pub struct UntriedReport {
    pub options: String,
    /// `budget` or `cannot_beat_the_best`.
    pub why: &'static str,
    /// About how long it would have taken.
    pub needs_s: Option<f64>,
    /// What it would take per run, estimated from its parts.
    pub estimate_ms: Option<f64>,
}

/// The fastest winners and the baseline measured again, back to back.
#[derive(Serialize)]
pub struct ConfirmationReport {
    pub rounds: usize,
    /// The median of the baseline's rounds.
    pub baseline_ms: f64,
    pub contenders: Vec<ContenderReport>,
    /// The contender kept as the best; `None`: none held, the baseline is kept.
    pub kept: Option<String>,
}

#[derive(Serialize)]
pub struct ContenderReport {
    pub options: String,
    /// The median of its rounds.
    pub median_ms: f64,
    pub speedup: f64,
    /// It beat the baseline's trial of the same round in most rounds.
    pub held: bool,
}

impl TuneReport {
    /// `baseline` is the `mge run` command line without the winner's options.
    pub fn new(tuning: &Tuning, baseline: &MgeCommand) -> TuneReport {
        let base = tuning.baseline_measured();
        let best_row = tuning.best_row();
        let best = best_row.measured.as_ref().expect("the best candidate was measured");
        let mut candidates: Vec<CandidateReport> = std::iter::once(&tuning.baseline)
            .chain(&tuning.rows)
            .map(|row| CandidateReport::new(row, base))
            .collect();
        // Measured and safe first, fastest first; then the rest in the order tried.
        candidates.sort_by(|a, b| {
            let key = |c: &CandidateReport| (c.status != Status::Ok, c.median_ms.unwrap_or(f64::INFINITY));
            let (a, b) = (key(a), key(b));
            a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
        });
        TuneReport {
            baseline: Baseline {
                options: tuning.baseline.candidate.to_string(),
                median_ms: base.median_ms,
                ci95_ms: base.interval_ms,
            },
            best: Best {
                options: best_row.candidate.to_string(),
                median_ms: best.median_ms,
                ci95_ms: best.interval_ms,
                speedup: base.median_ms / best.median_ms,
                command: baseline.clone().engine(&best_row.candidate.0).shell_line(),
            },
            candidates,
            untried: tuning.untried.iter().map(UntriedReport::new).collect(),
            confirmation: tuning
                .confirmation
                .as_ref()
                .map(|again| ConfirmationReport::new(again, tuning)),
            budget_s: tuning.budget.as_secs_f64(),
            used_s: tuning.used.as_secs_f64(),
        }
    }
}

impl Report for TuneReport {
    fn to_text(&self) -> String {
        let mut table = Table::new(
            &[
                "options",
                "median ms",
                "95% interval",
                "speed-up",
                "err",
                "took s (load + profiling + timed)",
                "status",
            ],
            &[1, 3, 4, 5],
        );
        for candidate in &self.candidates {
            let mut status = status_word(candidate.status).to_string();
            if candidate.status == Status::Ok && candidate.options != self.baseline.options {
                status += match (candidate.beats_baseline, candidate.slower_than_baseline) {
                    (true, _) => ", faster",
                    (false, true) => ", slower",
                    (false, false) => ", within the noise",
                };
            }
            if let Some(reason) = &candidate.reason {
                let _ = write!(status, ": {reason}");
            }
            table.row(vec![
                candidate.options.clone(),
                candidate.median_ms.map_or("-".into(), |ms| format!("{ms:.3}")),
                candidate
                    .ci95_ms
                    .map_or("-".into(), |[low, high]| format!("{low:.3} - {high:.3}")),
                candidate.speedup.map_or("-".into(), |x| format!("{x:.2}x")),
                candidate.err.map_or("-".into(), |err| format!("{err:.1e}")),
                candidate.took(),
                status,
            ]);
        }
        let mut out = table.render("");
        for untried in &self.untried {
            let why = match (untried.needs_s, untried.estimate_ms) {
                (Some(needs), _) => format!("needs about {needs:.0} s, more than the budget had left"),
                (_, Some(estimate)) => format!("cannot beat the best: about {estimate:.3} ms from its parts"),
                _ => untried.why.to_string(),
            };
            let _ = writeln!(out, "not tried: {}: {why}", untried.options);
        }
        let _ = writeln!(out, "budget: {:.0} s of {:.0} s used", self.used_s, self.budget_s);
        if let Some(again) = &self.confirmation {
            let _ = writeln!(
                out,
                "measured again, back to back ({} rounds): the baseline at {:.3} ms",
                again.rounds, again.baseline_ms
            );
            for contender in &again.contenders {
                let verdict = match (contender.held, again.kept.as_ref() == Some(&contender.options)) {
                    (true, true) => "held: the best",
                    (true, false) => "held",
                    (false, _) => "did not hold",
                };
                let _ = writeln!(
                    out,
                    "  {}: {:.3} ms, {:.2}x ({verdict})",
                    contender.options, contender.median_ms, contender.speedup
                );
            }
            if again.kept.is_none() {
                let _ = writeln!(out, "  none held: the baseline is kept");
            }
        }
        let _ = writeln!(
            out,
            "best: {} at {:.3} ms, {:.2}x the baseline's {:.3} ms",
            self.best.options, self.best.median_ms, self.best.speedup, self.baseline.median_ms
        );
        let _ = writeln!(out, "{}", self.best.command);
        out
    }
}

impl CandidateReport {
    fn new(row: &Row, baseline: &Measured) -> CandidateReport {
        let measured = row.measured.as_ref();
        CandidateReport {
            options: row.candidate.to_string(),
            median_ms: measured.map(|m| m.median_ms),
            ci95_ms: measured.and_then(|m| m.interval_ms),
            speedup: measured.map(|m| baseline.median_ms / m.median_ms),
            err: row.err,
            status: row.status,
            beats_baseline: row.safe().is_some_and(|m| m.beats(baseline)),
            slower_than_baseline: row.safe().is_some_and(|m| baseline.beats(m)),
            reason: row.reason.clone(),
            seconds: row.took.as_secs_f64(),
            load_s: measured.map(|m| m.load.as_secs_f64()),
            profiling_s: measured
                .and_then(|m| m.profiling)
                .map(|profiling| profiling.as_secs_f64()),
            timed_s: measured.map(|m| m.timing.as_secs_f64()),
        }
    }
}

impl CandidateReport {
    /// Its whole time, and where it went where it was measured.
    fn took(&self) -> String {
        let (Some(load), Some(timed)) = (self.load_s, self.timed_s) else {
            return format!("{:.1}", self.seconds);
        };
        match self.profiling_s {
            Some(profiling) => format!("{:.1} ({load:.1} + {profiling:.1} + {timed:.1})", self.seconds),
            None => format!("{:.1} ({load:.1} + {timed:.1})", self.seconds),
        }
    }
}

impl ConfirmationReport {
    fn new(again: &Confirmation, tuning: &Tuning) -> ConfirmationReport {
        let baseline_ms = again.baseline_ms();
        let options = |contender: &Contender| tuning.rows[contender.row].candidate.to_string();
        ConfirmationReport {
            rounds: again.baseline.len(),
            baseline_ms,
            contenders: again
                .contenders
                .iter()
                .map(|contender| ContenderReport {
                    options: options(contender),
                    median_ms: contender.median_ms(),
                    speedup: baseline_ms / contender.median_ms(),
                    held: contender.held,
                })
                .collect(),
            kept: again.kept.map(|at| options(&again.contenders[at])),
        }
    }
}

impl UntriedReport {
    fn new(untried: &crate::tune::Untried) -> UntriedReport {
        let (why, needs_s, estimate_ms) = match untried.why {
            Skipped::Budget { needs } => ("budget", Some(needs.as_secs_f64()), None),
            Skipped::CannotBeatTheBest { estimate_ms } => ("cannot_beat_the_best", None, Some(estimate_ms)),
        };
        UntriedReport {
            options: untried.candidate.to_string(),
            why,
            needs_s,
            estimate_ms,
        }
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Rejected => "rejected",
        Status::Crashed => "crashed",
        Status::Failed => "failed",
        Status::TimedOut => "timed out",
    }
}
