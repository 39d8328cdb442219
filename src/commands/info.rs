//! `mge info`: what a model file holds.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::InfoArgs;
use crate::engine::{silence_stdout, Device};
use crate::loading::{load_runtime, read_model, ready_runtime};
use crate::model::{ModelFile, Wrapping};
use crate::options::EngineOption;
use crate::packed_options::Carried;
use crate::report::info::{ModelInfo, Packing, Tensor, Testcase};
use crate::report::made_by::Making;
use crate::report::print;
use crate::report::run::TensorStats;
use crate::runner::testcase::testcase_values;
use crate::runner::{Outputs, Session};
use crate::settings::EngineSettings;
use crate::settings::Global;

/// What `mge info` was asked, turned once from `InfoArgs`.
pub struct InfoSettings {
    model: PathBuf,
    /// How to open the model: its key and decryption, its extern operators.
    engine: EngineSettings,
    /// `--ops`: the operators' cost, read from the graph.
    ops: bool,
    json: bool,
}

impl InfoSettings {
    pub fn from_args(args: InfoArgs, global: &Global) -> Result<InfoSettings> {
        Ok(InfoSettings {
            engine: EngineSettings::from_given(args.load.given, global)?,
            model: args.model,
            ops: args.ops,
            json: args.json,
        })
    }
}

pub fn info(settings: InfoSettings, global: &Global) -> Result<()> {
    let engine = &settings.engine;
    let model = read_model(&settings.model, engine)?;
    let packing = packing(&model)?;
    // Read from the graph before the engine is asked anything: it runs nothing.
    let ops = settings.ops.then(|| model.cost()).transpose()?;
    // An encrypted graph is verified once decrypted with the key the engine gets;
    // one that does not decrypt is the engine's to refuse, supervised.
    let verified = model.is_verified() || model.decrypts(engine.model_key.as_deref()).is_ok();
    let lite = load_runtime(global, Device::Cpu)?;
    let _ready = ready_runtime(&lite, engine, &model, &engine.network, global)?;
    let engine_output = silence_stdout(global.verbose);
    let session = Session::load(&lite, &model, Outputs::Asserted, &engine.network)?;
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
        model: settings.model.display().to_string(),
        container: model.is_container(),
        format: model.format(),
        size_bytes: model.size(),
        verified,
        packing,
        inputs: session.inputs.iter().map(Tensor::from).collect(),
        outputs: session
            .outputs
            .iter()
            .zip(session.engine_output_names())
            .map(|(output, engine_name)| Tensor::output(output, &engine_name))
            .collect(),
        testcases: model.testcase_count(),
        testcase_values,
        ops,
    };
    let making = Making::new(&global.runtime, lite.version().ok(), &engine.given);
    print(&info, settings.json, &making)
}

/// How a packed model is packed, and what it carries.
fn packing(model: &ModelFile) -> Result<Option<Packing>> {
    let Wrapping::Packed(pack) = &model.wrapping else {
        return Ok(None);
    };
    let carried = Carried::of(model)?;
    let refused = carried.by_mge().err().map(|refusal| format!("{refusal:#}"));
    let header = &pack.header;
    Ok(Some(Packing {
        name: header.name.clone(),
        model_decryption: header.model_decryption.clone(),
        info_decryption: pack.info.as_ref().map(|_| header.info_decryption.clone()),
        info_parser: pack.info.as_ref().map(|_| header.info_parser.clone()),
        info_options: carried
            .by_lite
            .iter()
            .flat_map(EngineOption::args)
            .chain(carried.unnamed)
            .collect(),
        mge_options: carried.mge_words,
        mge_options_refused: refused,
        info_encrypted: carried.encrypted_info.is_some(),
        fast_run_cache_bytes: carried.fast_run_cache,
    }))
}
