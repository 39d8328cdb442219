//! The report of `mge compare`: a row per tensor, a summary and, for two io
//! dumps, where the runs part ways.

use std::ffi::OsStr;
use std::fmt::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::compare::{DifferingSource, Divergence, DivergingVar, Mismatch, Rules, Status, TensorRow, Tolerance};
use crate::tensor::format_shape;
use crate::text::{printable, quoted_list, shell_line};

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
        let passed = tensors.iter().filter(|row| row.status == Status::Pass).count();
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
            number(row.max_abs, row.status),
            number(row.max_rel, row.status),
            number(row.err, row.status),
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
        text
    }
}

/// Two runs compared: their outputs (the verdict), then every var of both,
/// walked to where they part.
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
        outputs: Vec<TensorRow>,
        differing_sources: Vec<DifferingSource>,
        first_divergence: Option<Divergence>,
        vars: Vec<TensorRow>,
        kept: Option<&Path>,
    ) -> TwoRunReport {
        TwoRunReport {
            a: sides.0,
            b: sides.1,
            tolerance: rules.default_tolerance(),
            rules,
            passed: outputs.iter().filter(|row| row.status == Status::Pass).count(),
            failed: outputs.iter().filter(|row| row.status.failed()).count(),
            outputs,
            vars,
            differing_sources,
            first_divergence,
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
        let count = |status: Status| self.vars.iter().filter(|row| row.status == status).count();
        let compared = count(Status::Pass) + count(Status::Fail) + count(Status::DtypeMismatch);
        let differing = self.vars.iter().filter(|row| row.status.failed()).count()
            - count(Status::OnlyInA)
            - count(Status::OnlyInB);
        let _ = write!(out, "vars  {compared} compared, {differing} differ");
        let relaid = self.vars.iter().filter(|row| row.relayout.is_some()).count();
        if relaid > 0 {
            let _ = write!(out, " ({relaid} read across layouts)");
        }
        let _ = writeln!(
            out,
            "; {} only in a, {} only in b",
            count(Status::OnlyInA),
            count(Status::OnlyInB)
        );
        walk_text(&mut out, &self.differing_sources, self.first_divergence.as_ref());
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
                "top-{} differ in {} of {} rows; row {}: {:?} vs {:?}",
                topk.k,
                topk.differing_rows,
                topk.rows,
                format_shape(&first.row),
                first.a,
                first.b
            ),
            None => format!("top-{} agree in {} rows", topk.k, topk.rows),
        };
    }
    let mut text = row.first_mismatch.as_ref().map(mismatch_text).unwrap_or_default();
    if let Some(relayout) = &row.relayout {
        let _ = write!(text, "{}{relayout}", if text.is_empty() { "" } else { "; " });
    }
    if let Some(err) = row.stat_err {
        let _ = write!(text, "{}stat {err:.3e}", if text.is_empty() { "" } else { "; " });
    }
    match row.mismatches {
        Some(count) if count > 1 => format!("{text} ({count} elements outside)"),
        _ => text,
    }
}

fn status_text(status: Status) -> &'static str {
    match status {
        Status::Pass => "ok",
        Status::Fail => "MISMATCH",
        Status::ShapeMismatch => "SHAPE DIFFERS",
        Status::DtypeMismatch => "DTYPE DIFFERS",
        Status::OnlyInA => "ONLY IN A",
        Status::OnlyInB => "ONLY IN B",
        Status::NoValues => "no values",
    }
}

fn side_by_side(a: String, b: Option<String>) -> String {
    match b {
        Some(b) => format!("{a} vs {b}"),
        None => a,
    }
}

/// An error or difference: blank when not compared, `nan` when a side was NaN.
fn number(value: Option<f64>, status: Status) -> String {
    match (value, status) {
        (Some(0.0), _) => "0".into(),
        (Some(value), _) => format!("{value:.3e}"),
        (None, Status::Pass | Status::Fail | Status::DtypeMismatch) => "nan".into(),
        (None, _) => String::new(),
    }
}

fn how_it_differs(var: &DivergingVar) -> String {
    match (var.status, var.err) {
        (Status::ShapeMismatch, _) => "its shape differs".into(),
        (Status::DtypeMismatch, _) => "its dtype differs".into(),
        (_, Some(err)) => format!("err {err:.3e}"),
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
