//! `mge info`: what a model file holds.

use anyhow::{Context, Result};

use super::Global;
use crate::cli::InfoArgs;
use crate::engine::{silence_stdout, NetworkOptions};
use crate::model::ModelFile;
use crate::report::info::{ModelInfo, Tensor, Testcase};
use crate::report::print;
use crate::report::run::TensorStats;
use crate::runner::testcase::testcase_values;
use crate::runner::{Outputs, Session};
use crate::runtime;

pub fn info(args: InfoArgs, global: &Global) -> Result<()> {
    let model = ModelFile::read(&args.model)?;
    // Read from the graph before the engine is asked anything: it runs nothing.
    let ops = args.ops.then(|| model.cost()).transpose()?;
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
        container: model.is_container(),
        format: model.format.to_string(),
        size_bytes: model.size(),
        inputs: session.inputs.iter().map(Tensor::from).collect(),
        outputs: session.outputs.iter().map(Tensor::from).collect(),
        testcases: model.testcase_count(),
        testcase_values,
        ops,
    };
    print(&info, args.json)
}
