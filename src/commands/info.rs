//! `mge info`: what a model file holds.

use anyhow::{Context, Result};
use serde::Serialize;

use super::Global;
use crate::cli::InfoArgs;
use crate::engine::{silence_stdout, NetworkOptions};
use crate::model::{ModelFile, EXPECTATION_SUFFIX};
use crate::report::run::{stats_table, TensorStats};
use crate::report::table::Table;
use crate::report::{emit, emit_json};
use crate::runner::testcase::testcase_values;
use crate::runner::{Outputs, Session};
use crate::runtime;
use crate::tensor::{format_shape, TensorInfo};

#[derive(Serialize)]
struct Tensor {
    name: String,
    shape: Vec<usize>,
    dtype: String,
    /// An input carrying an expected output value (testcase containers only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    expectation: bool,
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
struct Testcase {
    index: usize,
    tensors: Vec<TensorStats>,
}

#[derive(Serialize)]
struct ModelInfo {
    model: String,
    format: String,
    size_bytes: usize,
    inputs: Vec<Tensor>,
    outputs: Vec<Tensor>,
    testcases: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    testcase_values: Vec<Testcase>,
}

pub fn info(args: InfoArgs, global: &Global) -> Result<()> {
    let model = ModelFile::read(&args.model)?;
    let lite = runtime::load(global.lite_lib.as_deref(), global.verbose)?;
    let engine_output = silence_stdout(global.verbose);
    let session = Session::load(&lite, &model, Outputs::Asserted, &NetworkOptions::default())?;
    let testcase_values = model
        .testcases()
        .enumerate()
        .map(|(index, graph)| {
            let values = testcase_values(&lite, graph, &session.testcase_inputs())
                .with_context(|| format!("testcase {index}"))?;
            let tensors = values
                .iter()
                .map(|(name, value)| TensorStats::describe(name, value))
                .collect();
            Ok(Testcase { index, tensors })
        })
        .collect::<Result<Vec<_>>>()?;
    drop(engine_output);
    let info = ModelInfo {
        model: args.model.display().to_string(),
        format: model.format.to_string(),
        size_bytes: model.size(),
        inputs: session.inputs.iter().map(Tensor::from).collect(),
        outputs: session.outputs.iter().map(Tensor::from).collect(),
        testcases: model.testcase_count(),
        testcase_values,
    };
    if args.json {
        return emit_json(&info);
    }
    let kind = if model.is_container() {
        "testcase container"
    } else {
        "model"
    };
    let mut text = format!("{}: {kind}, {}, {} bytes\n", info.model, info.format, info.size_bytes);
    let mut table = Table::new(&["", "name", "shape", "dtype"], &[]);
    for (role, tensors) in [("input", &info.inputs), ("output", &info.outputs)] {
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
    if model.is_container() {
        text += &format!("testcases: {}\n", info.testcases);
        for testcase in &info.testcase_values {
            let table = stats_table(&format!("#{}", testcase.index), &testcase.tensors);
            text += &table.render("  ");
        }
    }
    emit(&text)
}
