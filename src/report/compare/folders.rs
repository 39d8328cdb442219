//! The report of two folders of models, model by model.

use std::fmt::Write;

use serde::Serialize;

use super::runs::pair_cases;
use super::timing::TimingComparison;
use super::two_runs::{RunSide, RunsCompared};
use super::{cell, heading, status_text};
use crate::compare::{Divergence, Rules, TensorRow, TensorStatus, Tolerance};
use crate::model::diff::StructureDiff;
use crate::report::bmf::Latency;
use crate::report::by_op::pair_by_op_text;
use crate::report::junit::{JunitCase, Outcome, Suite};
use crate::report::table::Table;
use crate::report::Report;
use crate::text::printable;

/// Two folders of models compared, model by model.
#[derive(Serialize)]
pub struct FolderReport {
    /// Each side's folder (as `model`), options and runtime.
    pub a: RunSide,
    pub b: RunSide,
    /// The tolerance of the tensors no `--maxerr NAME:X` names.
    pub tolerance: Tolerance,
    pub rules: Rules,
    /// Rounds each pair is timed in where `--rounds` fixed them; null with
    /// `--no-timing`, and where each pair's rounds go until decided.
    pub rounds: Option<usize>,
    /// The most seconds each pair's rounds may take, where `--rounds` did not fix them.
    pub timing_budget_s: Option<f64>,
    /// `--min-effect`; null with `--no-timing`.
    pub min_effect_pct: Option<f64>,
    pub max_slowdown_pct: Option<f64>,
    /// A row per model under either folder, by its path under them.
    pub pairs: Vec<PairRow>,
    pub passed: usize,
    pub failed: usize,
    pub only_in_a: usize,
    pub only_in_b: usize,
}

/// One model under two folders.
#[derive(Serialize)]
pub struct PairRow {
    /// Its path under the folders.
    pub model: String,
    pub status: PairStatus,
    /// Why it could not be compared: a run that failed, in one line.
    pub error: Option<String>,
    /// Its outputs, when both runs ran.
    pub outputs: Option<PairOutputs>,
    pub timing: Option<TimingComparison>,
    /// How its two graphs differ, where both files could be read.
    pub structure: Option<StructureDiff>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairStatus {
    Passed,
    /// Its outputs differ, it is slower beyond `--max-slowdown`, or a run failed.
    Failed,
    OnlyInA,
    OnlyInB,
}

/// A pair's outputs compared, and where its runs part.
#[derive(Serialize)]
pub struct PairOutputs {
    pub rows: Vec<TensorRow>,
    pub passed: usize,
    pub failed: usize,
    /// The largest AssertEqual error of the outputs; null where one could not be compared.
    pub worst_err: Option<f64>,
    pub first_divergence: Option<Divergence>,
    /// Both runs, start to end, and the comparison.
    pub seconds: f64,
}

impl PairRow {
    /// A model on one side only.
    pub fn one_sided(model: String, status: PairStatus) -> PairRow {
        PairRow {
            model,
            status,
            error: None,
            outputs: None,
            timing: None,
            structure: None,
        }
    }

    /// A model whose runs could not both be compared: `error` says which failed.
    pub fn failed(model: String, error: String) -> PairRow {
        PairRow {
            error: Some(error),
            ..PairRow::one_sided(model, PairStatus::Failed)
        }
    }

    /// A model both of whose runs ran (and, unless `timing` is `Err`, were timed).
    pub fn compared(
        model: String,
        compared: RunsCompared,
        timing: Result<Option<TimingComparison>, String>,
    ) -> PairRow {
        let (passed, failed) = compared.tally();
        let outputs = PairOutputs {
            worst_err: compared.worst_err(),
            rows: compared.outputs,
            passed,
            failed,
            first_divergence: compared.first_divergence,
            seconds: compared.seconds,
        };
        let (timing, error) = match timing {
            Ok(timing) => (timing, None),
            Err(error) => (None, Some(error)),
        };
        let too_slow = timing.as_ref().is_some_and(|timing| timing.too_slow);
        PairRow {
            model,
            status: match failed > 0 || too_slow || error.is_some() {
                true => PairStatus::Failed,
                false => PairStatus::Passed,
            },
            error,
            outputs: Some(outputs),
            timing,
            structure: None,
        }
    }

    fn junit_suite(&self, rules: &Rules) -> Suite {
        let skipped = |side: &str| JunitCase {
            name: "pair".to_string(),
            time_s: 0.0,
            outcome: Outcome::Skipped(format!("only in {side}")),
        };
        let mut cases = match (&self.outputs, self.status) {
            (Some(outputs), _) => pair_cases((&outputs.rows, outputs.seconds), rules, self.timing.as_ref()),
            (None, PairStatus::OnlyInA) => vec![skipped("a")],
            (None, PairStatus::OnlyInB) => vec![skipped("b")],
            (None, _) => Vec::new(),
        };
        if let Some(error) = &self.error {
            cases.push(JunitCase {
                name: "runs".to_string(),
                time_s: 0.0,
                outcome: Outcome::Error(error.clone()),
            });
        }
        Suite {
            name: self.model.clone(),
            cases,
        }
    }

    /// Its row of the table, with the timing's cells when `timed`.
    fn cells(&self, timed: bool) -> Vec<String> {
        let outputs = match (&self.outputs, self.status) {
            (_, PairStatus::OnlyInA) => "ONLY IN A",
            (_, PairStatus::OnlyInB) => "ONLY IN B",
            // The words of its outputs' rows (`status_text`).
            (Some(outputs), _) if outputs.failed > 0 => status_text(TensorStatus::Fail),
            (Some(_), _) => status_text(TensorStatus::Pass),
            (None, _) => "ERROR",
        };
        let err = match &self.outputs {
            Some(outputs) => cell(outputs.worst_err, TensorStatus::Fail),
            None => String::new(),
        };
        let graph = match &self.structure {
            Some(structure) if structure.same() => "same",
            Some(_) => "differs",
            None => "",
        };
        let mut cells = vec![self.model.clone(), outputs.to_string(), err, graph.to_string()];
        if !timed {
            return cells;
        }
        match &self.timing {
            Some(timing) => cells.extend([
                format!("{:.4}", timing.a_ms),
                format!("{:.4}", timing.b_ms),
                timing.ratio_text(),
                timing.rounds.to_string(),
                timing.verdict(),
            ]),
            // Both ran, and the timing failed: its line follows the table.
            None if self.error.is_some() && self.outputs.is_some() => {
                cells.extend(["", "", "", "", "ERROR"].map(String::from))
            }
            None => {}
        }
        cells
    }
}

/// How the folders' pairs were timed.
pub struct FolderTiming {
    pub rounds: Option<usize>,
    pub budget_s: Option<f64>,
    pub min_effect_pct: f64,
    pub max_slowdown_pct: Option<f64>,
}

impl FolderReport {
    pub fn new(
        sides: (RunSide, RunSide),
        rules: Rules,
        timing: Option<FolderTiming>,
        pairs: Vec<PairRow>,
    ) -> FolderReport {
        let count = |status| pairs.iter().filter(|pair| pair.status == status).count();
        FolderReport {
            a: sides.0,
            b: sides.1,
            tolerance: rules.default_tolerance(),
            rules,
            rounds: timing.as_ref().and_then(|timing| timing.rounds),
            timing_budget_s: timing.as_ref().and_then(|timing| timing.budget_s),
            min_effect_pct: timing.as_ref().map(|timing| timing.min_effect_pct),
            max_slowdown_pct: timing.and_then(|timing| timing.max_slowdown_pct),
            passed: count(PairStatus::Passed),
            failed: count(PairStatus::Failed),
            only_in_a: count(PairStatus::OnlyInA),
            only_in_b: count(PairStatus::OnlyInB),
            pairs,
        }
    }

    /// Each timed pair's B latency for `--bmf`, named by its path under the folders.
    pub fn latencies(&self) -> Vec<Latency> {
        self.pairs
            .iter()
            .filter_map(|pair| Some(pair.timing.as_ref()?.b_latency(&pair.model)))
            .collect()
    }

    pub fn junit_suites(&self) -> Vec<Suite> {
        self.pairs.iter().map(|pair| pair.junit_suite(&self.rules)).collect()
    }
}

impl Report for FolderReport {
    fn to_text(&self) -> String {
        let mut out = heading(&self.a.describe(), &self.b.describe(), &self.rules);
        let timed = self.min_effect_pct.is_some();
        let mut header = vec!["model", "outputs", "worst err", "graph"];
        if timed {
            header.extend(["a ms", "b ms", "b/a [95%]", "rounds", "speed"]);
        }
        let mut table = Table::new(&header, &[2, 4, 5, 7]);
        for pair in &self.pairs {
            table.row(pair.cells(timed));
        }
        out.push_str(&table.render(""));
        out.push('\n');
        for pair in &self.pairs {
            if let Some(error) = &pair.error {
                let _ = writeln!(out, "{}: {}", printable(&pair.model), printable(error));
            }
            if let Some(reason) = pair.timing.as_ref().and_then(|timing| timing.reason.as_ref()) {
                let _ = writeln!(out, "{}: timing undecided: {reason}", printable(&pair.model));
            }
        }
        for pair in &self.pairs {
            if let Some(by_op) = pair.timing.as_ref().and_then(|timing| timing.by_op.as_ref()) {
                out.push_str(&pair_by_op_text(&pair.model, by_op));
            }
        }
        let _ = writeln!(
            out,
            "pairs  {} passed, {} failed; {} only in a, {} only in b",
            self.passed, self.failed, self.only_in_a, self.only_in_b
        );
        if let Some(percent) = self.min_effect_pct {
            let rounds = match (self.rounds, self.timing_budget_s) {
                (Some(rounds), _) => format!("{rounds} rounds per pair"),
                (None, Some(budget)) => format!("rounds until decided, at most {budget:.0} s a pair"),
                (None, None) => "rounds per pair".to_string(),
            };
            let _ = writeln!(
                out,
                "timing  medians of {rounds}, each side a fresh process per round; b/a with its 95% interval, same within ±{percent}%"
            );
        }
        out
    }
}
