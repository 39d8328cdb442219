//! One side of `mge compare A.mge B.mge`, and what two runs' tensors gave.

use std::fmt::Write;

use serde::Serialize;

use crate::compare::layers::ByLayer;
use crate::compare::{worst, DifferingSource, Divergence, DivergingVar, TensorRow, TensorStatus};

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
    pub unread_differing: Vec<DivergingVar>,
    /// `--by-layer`: the graphs' vars paired by topology and measured.
    pub by_layer: Option<ByLayer>,
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
    pub(super) fn worst_err(&self) -> Option<f64> {
        let err = self
            .outputs
            .iter()
            .map(|row| row.err.unwrap_or(f64::NAN))
            .fold(0.0, worst);
        (!err.is_nan()).then_some(err)
    }

    /// Outputs that passed and failed.
    pub(super) fn tally(&self) -> (usize, usize) {
        let passed = self
            .outputs
            .iter()
            .filter(|row| row.status == TensorStatus::Pass)
            .count();
        let failed = self.outputs.iter().filter(|row| row.status.failed()).count();
        (passed, failed)
    }
}
