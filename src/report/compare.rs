//! The report of `mge compare`: a row per tensor, a summary and, for two io
//! dumps, where the runs part ways.

use std::ffi::OsStr;
use std::fmt::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::Serialize;

use super::by_op::{by_op_text, pair_by_op_text, ByOp};
use super::junit::{Case, Outcome, Suite};
use super::structure::structure_text;
use super::table::Table;
use super::Report;
use crate::compare::{
    worst, DifferingSource, Divergence, DivergingVar, Mismatch, Rules, TensorRow, TensorStatus, Tolerance,
};
use crate::model::diff::StructureDiff;
use crate::runner::rounds::median_of_rounds;
use crate::runner::sequential::{rounds_text, Ended, Judged, Plan, RoundsNoise, Speed};
use crate::tensor::format_shape;
use crate::text::{counted, differ, number, part_of, printable, quoted_list, shell_line};

#[derive(Serialize)]
pub struct CompareReport {
    pub a: String,
    pub b: String,
    /// The tolerance of the tensors no `--maxerr NAME:X` names.
    pub tolerance: Tolerance,
    pub rules: Rules,
    pub tensors: Vec<TensorRow>,
    pub passed: usize,
    pub failed: usize,
    /// Only for two io dumps: constants and inputs that differ, with their readers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing_sources: Option<Vec<DifferingSource>>,
    /// Only for two io dumps; null when nothing diverges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<Option<Divergence>>,
}

/// Where the runs part ways, for two io dumps.
pub struct Walk {
    pub sources: Vec<DifferingSource>,
    pub divergence: Option<Divergence>,
}

impl CompareReport {
    pub fn new(a: String, b: String, rules: Rules, tensors: Vec<TensorRow>, walk: Option<Walk>) -> CompareReport {
        let failed = tensors.iter().filter(|row| row.status.failed()).count();
        let passed = tensors.iter().filter(|row| row.status == TensorStatus::Pass).count();
        let (sources, divergence) = match walk {
            Some(walk) => (Some(walk.sources), Some(walk.divergence)),
            None => (None, None),
        };
        CompareReport {
            a,
            b,
            tolerance: rules.default_tolerance(),
            rules,
            tensors,
            passed,
            failed,
            differing_sources: sources,
            first_divergence: divergence,
        }
    }
}

impl Report for CompareReport {
    fn to_text(&self) -> String {
        let mut out = heading(&self.a, &self.b, &self.rules);
        out.push_str(&tensor_table("tensor", &self.tensors, self.first_divergence.is_some()));
        let others = self.tensors.len() - self.passed - self.failed;
        let _ = write!(out, "\n{} passed, {} failed", self.passed, self.failed);
        if others > 0 {
            let _ = write!(out, ", {others} without values");
        }
        out.push('\n');
        if let Some(divergence) = &self.first_divergence {
            walk_text(
                &mut out,
                self.differing_sources.as_deref().unwrap_or_default(),
                divergence.as_ref(),
            );
        }
        out
    }
}

/// What was compared with what, and how.
fn heading(a: &str, b: &str, rules: &Rules) -> String {
    format!(
        "a  {}\nb  {}\ntolerance  {}\n\n",
        printable(a),
        printable(b),
        printable(&rules.describe())
    )
}

/// A row per tensor; for an io dump's vars with the operator type.
fn tensor_table(what: &str, rows: &[TensorRow], vars: bool) -> String {
    let mut header = vec![what];
    if vars {
        header.push("type");
    }
    header.extend([
        "shape",
        "dtype",
        "max abs",
        "max rel",
        "err",
        "status",
        "first mismatch",
    ]);
    let numbers = if vars { [4, 5, 6] } else { [3, 4, 5] };
    let mut table = Table::new(&header, &numbers);
    for row in rows {
        let mut cells = vec![row.name.clone()];
        if vars {
            cells.push(row.op_type.clone().unwrap_or_default());
        }
        cells.extend([
            side_by_side(format_shape(&row.shape), row.shape_b.as_deref().map(format_shape)),
            side_by_side(row.dtype.clone(), row.dtype_b.clone()),
            cell(row.max_abs, row.status),
            cell(row.max_rel, row.status),
            cell(row.err, row.status),
            status_text(row.status).to_string(),
            detail(row),
        ]);
        table.row(cells);
    }
    table.render("")
}

/// Where two runs part ways: the constants and inputs that differ, then the first divergence.
fn walk_text(out: &mut String, sources: &[DifferingSource], divergence: Option<&Divergence>) {
    for source in sources {
        let kind = if source.op_type == "Host2DeviceCopy" {
            "input"
        } else {
            "constant"
        };
        let _ = write!(out, "{kind} '{}' differs", printable(&source.var));
        match source.readers.as_slice() {
            [] => out.push('\n'),
            readers => {
                let readers = readers.iter().map(|reader| printable(reader));
                let _ = writeln!(out, ", read by {}", quoted_list(readers));
            }
        }
    }
    let Some(divergence) = divergence else {
        out.push_str("no computed var diverges\n");
        return;
    };
    let first = &divergence.first;
    let _ = writeln!(
        out,
        "first divergence: var '{}' of operator '{}' ({}), {}",
        printable(&first.var),
        printable(&first.operator),
        printable(&first.op_type),
        how_it_differs(first)
    );
    for next in &divergence.then {
        let _ = writeln!(
            out,
            "  then '{}' of '{}' ({}), {}",
            printable(&next.var),
            printable(&next.operator),
            printable(&next.op_type),
            how_it_differs(next)
        );
    }
}

/// One of the two runs of `mge compare A.mge B.mge`.
#[derive(Serialize)]
pub struct RunSide {
    pub model: String,
    /// Its engine options, as `mge run` takes them.
    pub options: Vec<String>,
    /// On megdnn's naive reference kernels (`--b-naive`).
    pub naive_kernels: bool,
    /// The Lite library it ran on, when the side names its own (`--a-options
    /// '--lite-lib PATH'`, `--a-runtime VERSION`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
}

impl RunSide {
    /// `model.mge --layout nchw44, on naive kernels`.
    pub fn describe(&self) -> String {
        let mut words = vec![self.model.clone()];
        words.extend(self.options.iter().cloned());
        let mut text = words.join(" ");
        if self.naive_kernels {
            text.push_str(", on megdnn's naive kernels");
        }
        if let Some(runtime) = &self.runtime {
            let _ = write!(text, ", on {runtime}");
        }
        text
    }
}

/// What two runs' tensors gave: their outputs (the verdict), and every var
/// of both, walked to where they part.
pub struct RunsCompared {
    pub outputs: Vec<TensorRow>,
    /// Every var of both runs, paired by name, by the rules without `--topk`.
    pub vars: Vec<TensorRow>,
    pub differing_sources: Vec<DifferingSource>,
    pub first_divergence: Option<Divergence>,
    /// Both runs, start to end, and the comparison.
    pub seconds: f64,
}

impl RunsCompared {
    /// The names of every tensor compared, outputs and vars (what a rule may name).
    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.outputs.iter().chain(&self.vars).map(|row| row.name.as_str())
    }

    /// The largest AssertEqual error of the outputs; `None` where one could
    /// not be compared (NaN on one side, a shape that differs).
    fn worst_err(&self) -> Option<f64> {
        let err = self
            .outputs
            .iter()
            .map(|row| row.err.unwrap_or(f64::NAN))
            .fold(0.0, worst);
        (!err.is_nan()).then_some(err)
    }

    /// Outputs that passed and failed.
    fn tally(&self) -> (usize, usize) {
        let passed = self
            .outputs
            .iter()
            .filter(|row| row.status == TensorStatus::Pass)
            .count();
        let failed = self.outputs.iter().filter(|row| row.status.failed()).count();
        (passed, failed)
    }
}

/// The speeds of two runs, timed in rounds.
#[derive(Serialize)]
pub struct TimingComparison {
    pub rounds: usize,
    /// The median of each side's medians, one per round, over the rounds of the ratio.
    pub a_ms: f64,
    pub b_ms: f64,
    /// B/A: the median of the rounds' ratios, with its 95% interval (over
    /// every look: each look's own is at `look_confidence`).
    pub ratio: f64,
    pub ci95: Option<[f64; 2]>,
    /// `faster`, `slower`, `same` or `undecided`, against ±`min_effect_pct`.
    pub speed: Speed,
    /// Why the speed is `undecided`.
    pub reason: Option<String>,
    /// The load other processes put on the machine during the rounds.
    pub noise: RoundsNoise,
    pub min_effect_pct: f64,
    /// The numbers of rounds the verdict was looked at, and each look's confidence.
    pub looks: Vec<usize>,
    pub look_confidence: f64,
    /// Why the rounds stopped: `decided`, `rounds` (the last look's, or
    /// `--rounds`), `budget` (`--timing-budget` was spent).
    pub stopped: Ended,
    pub max_slowdown_pct: Option<f64>,
    /// B is `slower` than A beyond `--max-slowdown`, with the whole interval: a failed check.
    pub too_slow: bool,
    /// The rounds, start to end.
    pub seconds: f64,
    /// `--by-op`: where the time went, from profiled rounds of their own.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub by_op: Option<ByOp>,
}

impl TimingComparison {
    /// A's and B's rounds (A's first in each) as `outcome` holds them,
    /// taken and judged by `plan`, against `--max-slowdown`; `None` for none.
    pub fn new(outcome: &Judged, plan: &Plan, max_slowdown: Option<f64>) -> Option<TimingComparison> {
        let verdict = outcome.verdicts.first()?;
        let rounds = &outcome.rounds;
        let too_slow = max_slowdown.is_some_and(|percent| {
            verdict.speed == Speed::Slower && verdict.interval.is_some_and(|[low, _]| low > 1.0 + percent / 100.0)
        });
        Some(TimingComparison {
            seconds: outcome.took.as_secs_f64(),
            rounds: rounds.len(),
            a_ms: median_of_rounds(rounds.iter().map(|round| &round[0])),
            b_ms: median_of_rounds(rounds.iter().map(|round| &round[1])),
            ratio: verdict.ratio.estimate,
            ci95: verdict.interval,
            speed: verdict.speed,
            reason: verdict.reason.clone(),
            noise: outcome.noise,
            min_effect_pct: plan.min_effect_percent,
            looks: outcome.looked.clone(),
            look_confidence: plan.looks.confidence,
            stopped: outcome.ended,
            max_slowdown_pct: max_slowdown,
            too_slow,
            by_op: None,
        })
    }

    /// `1.615 [1.571, 1.690]`: B/A and its interval.
    fn ratio_text(&self) -> String {
        match self.ci95 {
            Some([low, high]) => format!("{:.3} [{low:.3}, {high:.3}]", self.ratio),
            None => format!("{:.3}", self.ratio),
        }
    }

    /// `faster`, `same`, `slower`, `undecided`, or `SLOWER beyond --max-slowdown 10%`.
    fn verdict(&self) -> String {
        match self.max_slowdown_pct.filter(|_| self.too_slow) {
            Some(percent) => format!("SLOWER beyond --max-slowdown {percent}%"),
            None => self.speed.word().to_string(),
        }
    }

    /// The verdict with what it means: `same, within ±2%`, `undecided: ...`.
    fn verdict_said(&self) -> String {
        let percent = self.min_effect_pct;
        match (self.speed, self.max_slowdown_pct.filter(|_| self.too_slow)) {
            (_, Some(_)) => self.verdict(),
            (Speed::Same, None) => format!("same, within ±{percent}%"),
            (Speed::Faster, None) => format!("faster, by more than {percent}%"),
            (Speed::Slower, None) => format!("slower, by more than {percent}%"),
            (Speed::Undecided, None) => format!("undecided: {}", self.reason.as_deref().unwrap_or("")),
        }
    }

    /// What fails the check, if anything: `b is 61.5% slower than a ...`.
    pub fn failure(&self) -> Option<String> {
        let percent = self.max_slowdown_pct.filter(|_| self.too_slow)?;
        let [low, high] = self.ci95?;
        Some(format!(
            "b is {:.1}% slower than a (95% interval {:.1}% to {:.1}%), beyond --max-slowdown {percent}%",
            (self.ratio - 1.0) * 100.0,
            (low - 1.0) * 100.0,
            (high - 1.0) * 100.0
        ))
    }

    /// `other processes used 0.12 of 2 cores during the rounds`.
    fn load_text(&self) -> Option<String> {
        let load = self.noise.other_load_cores?;
        Some(format!(
            "other processes used {load:.2} of {} cores during the rounds{}",
            self.noise.cores,
            if self.noise.loaded() {
                ": the machine was loaded"
            } else {
                ""
            }
        ))
    }

    /// The report's lines: both medians, then B/A and what it says, then the load.
    fn to_text(&self) -> String {
        let looks: Vec<String> = self.looks.iter().map(usize::to_string).collect();
        let mut text = format!(
            "timing  a {:.4} ms, b {:.4} ms (medians of {} in {:.0} s, each side a fresh process per round)\n        b/a {} (95%, looked at {} {}): {}\n",
            self.a_ms,
            self.b_ms,
            rounds_text(self.rounds),
            self.seconds,
            self.ratio_text(),
            looks.join(", "),
            if self.looks == [1] { "round" } else { "rounds" },
            self.verdict_said()
        );
        if let Some(load) = self.load_text() {
            let _ = writeln!(text, "        {load}");
        }
        if let Some(by_op) = &self.by_op {
            text.push_str(&by_op_text(by_op));
        }
        text
    }
}

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
    /// Both runs, start to end, and the comparison of their tensors.
    pub seconds: f64,
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
            seconds: compared.seconds,
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
        walk_text(&mut out, &self.differing_sources, self.first_divergence.as_ref());
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

/// What the last column tells: the top-k difference, or the first element
/// outside the tolerance with how many are.
fn detail(row: &TensorRow) -> String {
    if let Some(topk) = &row.topk {
        return match &topk.first_difference {
            Some(first) => format!(
                "top-{} differ in {}; row {}: {:?} vs {:?}",
                topk.k,
                part_of(topk.differing_rows, topk.rows, "row"),
                format_shape(&first.row),
                first.a,
                first.b
            ),
            None => format!("top-{} agree in {}", topk.k, counted(topk.rows, "row")),
        };
    }
    let mut text = row.first_mismatch.as_ref().map(mismatch_text).unwrap_or_default();
    if let Some(relayout) = &row.relayout {
        let _ = write!(text, "{}{relayout}", if text.is_empty() { "" } else { "; " });
    }
    if let Some(err) = row.stat_err {
        let _ = write!(text, "{}stat {}", if text.is_empty() { "" } else { "; " }, number(err));
    }
    if let Some(left_out) = row.left_out {
        let _ = write!(text, "{}{left_out}", if text.is_empty() { "" } else { "; " });
    }
    match row.mismatches {
        Some(count) if count > 1 => format!("{text} ({count} elements outside)"),
        _ => text,
    }
}

fn status_text(status: TensorStatus) -> &'static str {
    match status {
        TensorStatus::Pass => "pass",
        TensorStatus::Fail => "FAIL",
        TensorStatus::ShapeMismatch => "SHAPE MISMATCH",
        TensorStatus::DtypeMismatch => "DTYPE MISMATCH",
        TensorStatus::OnlyInA => "ONLY IN A",
        TensorStatus::OnlyInB => "ONLY IN B",
        TensorStatus::NoValues => "no values",
    }
}

fn side_by_side(a: String, b: Option<String>) -> String {
    match b {
        Some(b) => format!("{a} vs {b}"),
        None => a,
    }
}

/// An error or difference: blank when not compared, `nan` when a side was NaN.
fn cell(value: Option<f64>, status: TensorStatus) -> String {
    match (value, status) {
        (Some(value), _) => number(value),
        (None, TensorStatus::Pass | TensorStatus::Fail | TensorStatus::DtypeMismatch) => "nan".into(),
        (None, _) => String::new(),
    }
}

fn how_it_differs(var: &DivergingVar) -> String {
    match (var.status, var.err) {
        (TensorStatus::ShapeMismatch, _) => "its shape differs".into(),
        (TensorStatus::DtypeMismatch, _) => "its dtype differs".into(),
        (_, Some(err)) => format!("err {}", number(err)),
        (_, None) => "err nan".into(),
    }
}

/// `(1, 2): 0.5 vs 0.25`: the index and the values of A and B there.
pub fn mismatch_text(mismatch: &Mismatch) -> String {
    format!(
        "{}: {} vs {}",
        format_shape(&mismatch.index),
        value_text(mismatch.a),
        value_text(mismatch.b)
    )
}

/// The shortest text that reads back as the value; as a `float32` when it is one.
fn value_text(value: f64) -> String {
    let single = value as f32;
    if single as f64 == value || value.is_nan() {
        single.to_string()
    } else {
        value.to_string()
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
fn pair_cases(outputs: (&[TensorRow], f64), rules: &Rules, timing: Option<&TimingComparison>) -> Vec<Case> {
    let mut cases = vec![Case {
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
        cases.push(Case {
            name: "timing".to_string(),
            time_s: timing.seconds,
            outcome,
        });
    }
    cases
}

impl TwoRunReport {
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
        let skipped = |side: &str| Case {
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
            cases.push(Case {
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
