//! The report of two runs of models: their outputs (the verdict), every var
//! walked to where they part, their graphs and their speeds.

use std::ffi::OsStr;
use std::fmt::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::Serialize;

use super::layers::by_layer_text;
use super::timing::TimingComparison;
use super::two_runs::{RunSide, RunsCompared};
use super::{heading, status_text, tensor_table, walk_text};
use crate::compare::layers::ByLayer;
use crate::compare::{DifferingSource, Divergence, DivergingVar, Rules, TensorRow, TensorStatus, Tolerance};
use crate::model::diff::StructureDiff;
use crate::report::bmf::Latency;
use crate::report::junit::{JunitCase, Outcome, Suite};
use crate::report::structure::structure_text;
use crate::report::Report;
use crate::text::{differ, number, part_of, printable, shell_line};

/// Two runs compared: their outputs (the verdict), then every var of both,
/// walked to where they part, and their speeds.
#[derive(Serialize)]
pub struct TwoRunReport {
    pub a: RunSide,
    pub b: RunSide,
    /// The tolerance of the tensors no `--maxerr NAME:X` names.
    pub tolerance: Tolerance,
    pub rules: Rules,
    pub outputs: Vec<TensorRow>,
    /// Outputs that passed and failed: the verdict.
    pub passed: usize,
    pub failed: usize,
    /// Every var of both runs, paired by name, by the rules without `--topk`.
    pub vars: Vec<TensorRow>,
    pub differing_sources: Vec<DifferingSource>,
    /// Null when no computed var diverges.
    pub first_divergence: Option<Divergence>,
    /// Computed vars that differ but that nothing reads: left out of the divergence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread_differing: Vec<DivergingVar>,
    /// Both runs, start to end, and the comparison of their tensors.
    pub seconds: f64,
    /// `--by-layer`: `by_layer`, `by_layer_fall` and the counts of layers unpaired.
    #[serde(flatten)]
    pub by_layer: Option<ByLayer>,
    /// Null with `--no-timing`.
    pub timing: Option<TimingComparison>,
    /// How the two models' graphs differ; null for one model run twice, or
    /// a file whose graph cannot be read (encrypted).
    pub structure: Option<StructureDiff>,
    /// Where both runs' io dumps and outputs were kept (`--keep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
    /// The command that compares the kept io dumps, quoted for a shell.
    #[serde(skip)]
    pub kept_command: Option<String>,
}

impl TwoRunReport {
    pub fn new(
        sides: (RunSide, RunSide),
        rules: Rules,
        compared: RunsCompared,
        timing: Option<TimingComparison>,
        kept: Option<&Path>,
    ) -> TwoRunReport {
        let (passed, failed) = compared.tally();
        TwoRunReport {
            a: sides.0,
            b: sides.1,
            tolerance: rules.default_tolerance(),
            rules,
            passed,
            failed,
            outputs: compared.outputs,
            vars: compared.vars,
            differing_sources: compared.differing_sources,
            first_divergence: compared.first_divergence,
            unread_differing: compared.unread_differing,
            seconds: compared.seconds,
            by_layer: compared.by_layer,
            timing,
            structure: None,
            kept: kept.map(|dir| dir.display().to_string()),
            kept_command: kept.map(|dir| {
                let dumps = ["a", "b"].map(|run| dir.join(run).join("io"));
                let dashes = dumps.iter().any(|dump| dump.as_os_str().as_bytes().starts_with(b"-"));
                let words = ["mge", "compare"].iter().chain(dashes.then_some(&"--")).map(OsStr::new);
                shell_line(words.chain(dumps.iter().map(|dump| dump.as_os_str())))
            }),
        }
    }
}

impl Report for TwoRunReport {
    fn to_text(&self) -> String {
        let mut out = heading(&self.a.describe(), &self.b.describe(), &self.rules);
        out.push_str(&tensor_table("output", &self.outputs, false));
        let _ = writeln!(out, "\n{} passed, {} failed", self.passed, self.failed);
        let count = |status: TensorStatus| self.vars.iter().filter(|row| row.status == status).count();
        let compared = count(TensorStatus::Pass) + count(TensorStatus::Fail) + count(TensorStatus::DtypeMismatch);
        let differing = self.vars.iter().filter(|row| row.status.failed()).count()
            - count(TensorStatus::OnlyInA)
            - count(TensorStatus::OnlyInB);
        let _ = write!(out, "vars  {compared} compared, {differing} differ");
        let relaid = self.vars.iter().filter(|row| row.relayout.is_some()).count();
        if relaid > 0 {
            let _ = write!(out, " ({relaid} read across layouts)");
        }
        let _ = writeln!(
            out,
            "; {} only in a, {} only in b",
            count(TensorStatus::OnlyInA),
            count(TensorStatus::OnlyInB)
        );
        walk_text(
            &mut out,
            &self.differing_sources,
            self.first_divergence.as_ref(),
            &self.unread_differing,
        );
        if let Some(layers) = &self.by_layer {
            out.push_str(&by_layer_text(layers));
        }
        if let Some(structure) = self.structure.as_ref().filter(|structure| !structure.same()) {
            out.push_str(&structure_text(structure));
        }
        if let Some(timing) = &self.timing {
            out.push_str(&timing.to_text());
        }
        if let (Some(dir), Some(command)) = (&self.kept, &self.kept_command) {
            let _ = writeln!(
                out,
                "kept  {dir}/a and {dir}/b: io/ (every var) and outputs/ of each run; `{command}` lists every var",
                dir = printable(dir)
            );
        }
        out
    }
}

/// What fails a pair's outputs: `1 of 2 outputs differs beyond maxerr 1e-4: 'prob' err 1.95642`.
fn outputs_failure(outputs: &[TensorRow], rules: &Rules) -> Option<String> {
    let failed: Vec<String> = outputs
        .iter()
        .filter(|row| row.status.failed())
        .map(|row| match (row.status, row.err) {
            (TensorStatus::Fail | TensorStatus::DtypeMismatch, Some(err)) => {
                format!("'{}' err {}", printable(&row.name), number(err))
            }
            (status, _) => format!("'{}' {}", printable(&row.name), status_text(status).to_lowercase()),
        })
        .collect();
    (!failed.is_empty()).then(|| {
        format!(
            "{} {} beyond {}: {}",
            part_of(failed.len(), outputs.len(), "output"),
            differ(failed.len()),
            rules.describe(),
            failed.join(", ")
        )
    })
}

/// A pair's JUnit cases: its outputs, then its timing (when timed).
pub(super) fn pair_cases(
    outputs: (&[TensorRow], f64),
    rules: &Rules,
    timing: Option<&TimingComparison>,
) -> Vec<JunitCase> {
    let mut cases = vec![JunitCase {
        name: "outputs".to_string(),
        time_s: outputs.1,
        outcome: outputs_failure(outputs.0, rules).map_or(Outcome::Passed, Outcome::Failure),
    }];
    if let Some(timing) = timing {
        let outcome = match (timing.failure(), &timing.reason) {
            (Some(failure), _) => Outcome::Failure(failure),
            // Undecided is no failure: its reason goes to the case's output.
            (None, Some(reason)) => Outcome::Noted(format!("undecided: {reason}")),
            (None, None) => Outcome::Passed,
        };
        cases.push(JunitCase {
            name: "timing".to_string(),
            time_s: timing.seconds,
            outcome,
        });
    }
    cases
}

impl TwoRunReport {
    /// B's latency for `--bmf`, named by B's model; none without timing.
    pub fn latencies(&self) -> Vec<Latency> {
        self.timing
            .iter()
            .map(|timing| timing.b_latency(&self.b.model))
            .collect()
    }

    /// Its JUnit suite: the outputs, and the timing when the runs were timed.
    pub fn junit_suite(&self) -> Suite {
        Suite {
            name: format!("{} vs {}", self.a.describe(), self.b.describe()),
            cases: pair_cases((&self.outputs, self.seconds), &self.rules, self.timing.as_ref()),
        }
    }

    /// What failed the check, if anything: outputs that differ, a slowdown beyond `--max-slowdown`.
    pub fn failures(&self) -> Vec<String> {
        let outputs = (self.failed > 0).then(|| {
            let outputs = part_of(self.failed, self.outputs.len(), "output");
            format!("{outputs} {}", differ(self.failed))
        });
        outputs
            .into_iter()
            .chain(self.timing.as_ref().and_then(TimingComparison::failure))
            .collect()
    }
}
