//! `mge info`: what a model file holds.

use serde::Serialize;

use super::run::{stats_table, TensorStats};
use super::table::Table;
use super::Report;
use crate::model::EXPECTATION_SUFFIX;
use crate::tensor::{format_shape, TensorInfo};

#[derive(Serialize)]
pub struct Tensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    /// An input carrying an expected output value (testcase containers only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expectation: bool,
}

impl From<&TensorInfo> for Tensor {
    fn from(info: &TensorInfo) -> Tensor {
        Tensor {
            name: info.name.clone(),
            shape: info.shape.clone(),
            dtype: info.dtype.to_string(),
            expectation: info.name.ends_with(EXPECTATION_SUFFIX),
        }
    }
}

#[derive(Serialize)]
pub struct Testcase {
    pub index: usize,
    pub tensors: Vec<TensorStats>,
}

#[derive(Serialize)]
pub struct ModelInfo {
    pub model: String,
    /// A testcase container rather than a plain model.
    #[serde(skip)]
    pub container: bool,
    pub format: String,
    pub size_bytes: usize,
    pub inputs: Vec<Tensor>,
    pub outputs: Vec<Tensor>,
    pub testcases: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub testcase_values: Vec<Testcase>,
}

impl Report for ModelInfo {
    fn to_text(&self) -> String {
        let kind = if self.container { "testcase container" } else { "model" };
        let mut text = format!("{}: {kind}, {}, {} bytes\n", self.model, self.format, self.size_bytes);
        let mut table = Table::new(&["", "name", "shape", "dtype"], &[]);
        for (role, tensors) in [("input", &self.inputs), ("output", &self.outputs)] {
            for tensor in tensors {
                let role = if tensor.expectation { "expect" } else { role };
                table.row(vec![
                    role.into(),
                    tensor.name.clone(),
                    format_shape(&tensor.shape),
                    tensor.dtype.clone(),
                ]);
            }
        }
        text += &table.render("");
        if self.container {
            text += &format!("testcases: {}\n", self.testcases);
            for testcase in &self.testcase_values {
                let table = stats_table(&format!("#{}", testcase.index), &testcase.tensors);
                text += &table.render("  ");
            }
        }
        text
    }
}
