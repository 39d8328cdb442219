//! `mge tune`'s table, its JSON document and the command line of the winner.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::supervise::command::MgeCommand;
use crate::tune::trial::Status;
use crate::tune::{Row, Tuning};

#[derive(Serialize)]
pub struct TuneReport {
    pub baseline: Baseline,
    pub best: Best,
    pub candidates: Vec<CandidateReport>,
    /// Candidates the budget left no time for.
    pub untried: Vec<String>,
}

#[derive(Serialize)]
pub struct Baseline {
    pub options: String,
    pub median_ms: f64,
}

#[derive(Serialize)]
pub struct Best {
    pub options: String,
    pub median_ms: f64,
    pub speedup: f64,
    pub command: String,
}

#[derive(Serialize)]
pub struct CandidateReport {
    pub options: String,
    pub median_ms: Option<f64>,
    pub speedup: Option<f64>,
    pub err: Option<f64>,
    pub status: Status,
    pub reason: Option<String>,
}

impl TuneReport {
    /// `baseline` is the `mge run` command line without the winner's options.
    pub fn new(tuning: &Tuning, baseline: &MgeCommand) -> TuneReport {
        let baseline_ms = tuning.baseline.median_ms.expect("the baseline was measured");
        let best = tuning.best_row();
        let best_ms = best.median_ms.expect("the best candidate was measured");
        let full = baseline.clone().engine(&best.candidate.0).words();
        let mut candidates: Vec<CandidateReport> = std::iter::once(&tuning.baseline)
            .chain(&tuning.rows)
            .map(|row| CandidateReport::new(row, baseline_ms))
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
                median_ms: baseline_ms,
            },
            best: Best {
                options: best.candidate.to_string(),
                median_ms: best_ms,
                speedup: baseline_ms / best_ms,
                command: shell_line(&full),
            },
            candidates,
            untried: tuning.untried.iter().map(ToString::to_string).collect(),
        }
    }
}

impl Report for TuneReport {
    fn to_text(&self) -> String {
        let mut table = Table::new(&["options", "median ms", "speed-up", "err", "status"], &[1, 2, 3]);
        for candidate in &self.candidates {
            let status = match &candidate.reason {
                Some(reason) => format!("{}: {reason}", status_word(candidate.status)),
                None => status_word(candidate.status).to_string(),
            };
            table.row(vec![
                candidate.options.clone(),
                candidate.median_ms.map_or("-".into(), |ms| format!("{ms:.3}")),
                candidate.speedup.map_or("-".into(), |x| format!("{x:.2}x")),
                candidate.err.map_or("-".into(), |err| format!("{err:.1e}")),
                status,
            ]);
        }
        let mut out = table.render("");
        if !self.untried.is_empty() {
            let _ = writeln!(out, "not tried (budget spent): {}", self.untried.join(", "));
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
    fn new(row: &Row, baseline_ms: f64) -> CandidateReport {
        CandidateReport {
            options: row.candidate.to_string(),
            median_ms: row.median_ms,
            speedup: row.median_ms.map(|ms| baseline_ms / ms),
            err: row.err,
            status: row.status,
            reason: row.reason.clone(),
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

/// Arguments joined for a POSIX shell, quoted where they need it.
fn shell_line(args: &[String]) -> String {
    let quote = |arg: &String| {
        let plain = !arg.is_empty()
            && arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
        if plain {
            arg.clone()
        } else {
            format!("'{}'", arg.replace('\'', r"'\''"))
        }
    };
    args.iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_what_the_shell_would_split_or_expand() {
        let args = ["mge", "run", "a b.mge", "-i", "#rand(0,1)", "it's"].map(String::from);
        assert_eq!(shell_line(&args), r#"mge run 'a b.mge' -i '#rand(0,1)' 'it'\''s'"#);
    }
}
