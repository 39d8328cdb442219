//! The report of `mge run`: human text and the JSON document.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use crate::runner::timing::Timing;
use crate::tensor::{format_shape, HostTensor};

#[derive(Serialize)]
pub struct RunReport {
    pub model: String,
    pub format: String,
    pub device: String,
    pub inputs: Vec<InputReport>,
    pub outputs: Vec<TensorStats>,
    pub timing_ms: Timing,
    pub throughput_per_s: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<ExpectReport>,
}

#[derive(Serialize)]
pub struct InputReport {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub source: String,
}

#[derive(Serialize)]
pub struct TensorStats {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

#[derive(Serialize)]
pub struct ExpectReport {
    pub name: String,
    pub file: String,
    /// NaN (JSON null) when a value was NaN.
    pub err: f64,
    pub maxerr: f64,
    pub passed: bool,
}

impl TensorStats {
    pub fn describe(name: &str, value: &HostTensor) -> TensorStats {
        let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for v in value.values() {
            min = min.min(v);
            max = max.max(v);
            sum += v;
        }
        let count = value.len();
        TensorStats {
            name: name.to_string(),
            shape: value.shape.clone(),
            dtype: value.dtype.to_string(),
            min: if count == 0 { f64::NAN } else { min },
            max: if count == 0 { f64::NAN } else { max },
            mean: sum / count as f64,
        }
    }
}

/// A value for tables: six decimals, like NumPy's print options.
fn number(value: f64) -> String {
    format!("{value:.6}")
}

/// Tensors with their value ranges, one row each, under `title`.
pub fn stats_table(title: &str, tensors: &[TensorStats]) -> Table {
    let mut table = Table::new(&[title, "shape", "dtype", "min", "max", "mean"], &[3, 4, 5]);
    for t in tensors {
        table.row(vec![
            t.name.clone(),
            format_shape(&t.shape),
            t.dtype.clone(),
            number(t.min),
            number(t.max),
            number(t.mean),
        ]);
    }
    table
}

impl RunReport {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "model    {} ({}) on {}", self.model, self.format, self.device);
        let mut inputs = Table::new(&["input", "shape", "dtype", "source"], &[]);
        for input in &self.inputs {
            inputs.row(vec![
                input.name.clone(),
                format_shape(&input.shape),
                input.dtype.clone(),
                input.source.clone(),
            ]);
        }
        out.push_str(&inputs.render(""));
        let outputs = stats_table("output", &self.outputs);
        out.push_str(&outputs.render(""));
        for expect in &self.expect {
            let verdict = if expect.passed { "ok" } else { "MISMATCH" };
            let _ = writeln!(
                out,
                "expect   {} vs {}: err {:e} (maxerr {:e}) {verdict}",
                expect.name, expect.file, expect.err, expect.maxerr
            );
        }
        let t = &self.timing_ms;
        let _ = writeln!(
            out,
            "timing   {} iterations, ms per iteration: min {:.4}  median {:.4}  mean {:.4}  max {:.4}  stddev {:.4}",
            t.iterations, t.min, t.median, t.mean, t.max, t.stddev
        );
        let _ = writeln!(out, "throughput {:.2} iterations/s", self.throughput_per_s);
        out
    }
}
