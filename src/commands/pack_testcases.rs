//! `mge pack-testcases`: a plain model run on feeds and written as a testcase
//! container, in the format of MegEngine's `trace.dump(input_data=...)`: the
//! model with an AssertEqual operator per output checking it against a new
//! input `<output>:expect`, then a testcase graph holding the feeds and the
//! outputs of this run as those inputs' values. `mge check`, load_and_run
//! and MegEngine verify it with the engine's own assertions.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::cli::PackTestcasesArgs;
use crate::loading::{prepare, Testcases};
use crate::model::{TensorSpec, EXPECTATION_SUFFIX};
use crate::output_files::{claim_file, write_atomically};
use crate::report::made_by::Making;
use crate::report::pack_testcases::{PackTestcasesReport, TestcaseTensor};
use crate::report::print;
use crate::runner::RunPlan;
use crate::settings::Global;
use crate::settings::ModelSettings;
use crate::tensor::{DType, HostTensor};

/// What `mge pack-testcases` was asked, turned once from `PackTestcasesArgs`.
pub struct PackTestcasesSettings {
    /// The model, the feeds of its one testcase, and the engine options the
    /// expected outputs are computed under.
    model: ModelSettings,
    /// `-o OUT.mge`: the container.
    output: PathBuf,
    /// The largest error the container's assertions accept.
    maxerr: f64,
    json: bool,
}

impl PackTestcasesSettings {
    pub fn from_args(args: PackTestcasesArgs, global: &Global) -> Result<PackTestcasesSettings> {
        let model = ModelSettings::from_args(&args.model, global)?;
        claim_file("-o", &args.output).with_context(|| format!("-o {}", args.output.display()))?;
        Ok(PackTestcasesSettings {
            model,
            output: args.output,
            maxerr: args.maxerr,
            json: args.json,
        })
    }
}

pub fn pack_testcases(settings: PackTestcasesSettings, global: &Global) -> Result<()> {
    let path = &settings.model.path;
    let (mut prepared, ()) = prepare(&settings.model, Testcases::Ignore, global, |opened, _| {
        if opened.model.is_container() {
            bail!(
                "{} is a testcase container already: pack the plain model it was dumped from",
                path.display()
            );
        }
        // Checked before the engine runs: only an FBS v2 graph can be edited.
        opened.model.check_editable("a testcase container")
    })?;
    let feeds = prepared.feeds(global)?;
    prepared.session.feed(&feeds)?;
    prepared.session.measure(&RunPlan::once(global.verbose), &mut ())?;
    let outputs = prepared.session.read_outputs()?;
    let expected: Vec<(String, &HostTensor)> = outputs
        .iter()
        .map(|(name, tensor)| (format!("{name}{EXPECTATION_SUFFIX}"), tensor))
        .collect();
    let output_specs = outputs
        .iter()
        .map(|(name, tensor)| spec(name, tensor))
        .collect::<Result<Vec<_>>>()?;
    let values = feeds
        .iter()
        .map(|feed| (feed.name.as_str(), &feed.tensor))
        .chain(expected.iter().map(|(name, tensor)| (name.as_str(), *tensor)))
        .map(|(name, tensor)| Ok((spec(name, tensor)?, tensor.data.as_slice())))
        .collect::<Result<Vec<_>>>()?;
    let container = prepared
        .model
        .as_container(&output_specs, settings.maxerr as f32, &values)
        .with_context(|| format!("cannot pack {}", path.display()))?;
    let lite = prepared.finish()?;
    write_atomically(&settings.output, &container)?;
    let described = |name: &str, tensor: &HostTensor| TestcaseTensor {
        name: name.to_string(),
        shape: tensor.shape.clone(),
        dtype: tensor.dtype.to_string(),
    };
    let report = PackTestcasesReport {
        container: settings.output.display().to_string(),
        model: path.display().to_string(),
        size_bytes: container.len(),
        testcases: 1,
        inputs: feeds.iter().map(|feed| described(&feed.name, &feed.tensor)).collect(),
        expected: outputs.iter().map(|(name, tensor)| described(name, tensor)).collect(),
        maxerr: settings.maxerr,
    };
    let making = Making::new(&global.runtime, lite.version().ok(), &settings.model.engine.given);
    print(&report, settings.json, &making)
}

/// How the graph describes `tensor`, named `name`.
fn spec<'a>(name: &'a str, tensor: &'a HostTensor) -> Result<TensorSpec<'a>> {
    Ok(TensorSpec {
        name,
        shape: &tensor.shape,
        dtype: megdnn_dtype(tensor.dtype).with_context(|| format!("'{name}'"))?,
    })
}

/// megdnn's `DTypeEnum` of a dtype (`dtype.fbs`).
fn megdnn_dtype(dtype: DType) -> Result<u8> {
    Ok(match dtype {
        DType::F32 => 0,
        DType::U8 => 1,
        DType::I8 => 2,
        DType::I16 => 3,
        DType::I32 => 4,
        DType::F16 => 9,
        DType::U16 => 19,
        DType::U32 | DType::I64 => bail!("a graph holds no {dtype} tensor (MegEngine has no such dtype)"),
    })
}
