//! `mge dump`: a model's tensors written out: its outputs, every var of one
//! run (the engine's io dump, indexed), its embedded testcases, or the model
//! itself after the engine's global layout transform.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::options::{feeds_or_first_testcase, load_runtime, network_options, save_algo_cache};
use super::Global;
use crate::cli::{DumpArgs, IoFormat};
use crate::engine::{silence_stdout, IoDump, Lite};
use crate::feeds;
use crate::iodump::{convert_binary, index_text, TEXT_FILE};
use crate::model::{ModelFile, EXPECTATION_SUFFIX};
use crate::output_files::{ensure_writable, npy_files, staged_beside, write_atomically, write_set, write_tensors};
use crate::profile::{executed_graph, request_engine_profile};
use crate::report::emit;
use crate::runner::testcase::testcase_values;
use crate::runner::{Outputs, Plan, Session};
use crate::tensor::HostTensor;

pub fn dump(args: DumpArgs, global: &Global) -> Result<()> {
    let mut options = network_options(&args.engine, global)?;
    let specs = feeds::expand_specs(&args.feeds.inputs)?;
    let model = ModelFile::read(&args.model)?;
    if args.testcases.is_some() && !model.is_container() {
        bail!(
            "--testcases: {} embeds no testcases (it is not a container dumped with input_data)",
            args.model.display()
        );
    }
    if let Some(file) = &args.layout_transform_model {
        ensure_writable(file).context("--layout-transform-model")?;
        if !options.layout_transform {
            options.layout_transform = true;
            global.note("--layout-transform-model turns on the engine's global layout transform");
        }
    }
    // The engine writes its dump into a temporary folder; DIR is made only after the run.
    let io = match &args.io {
        None => None,
        Some(dir) => {
            if dir.exists() && !dir.is_dir() {
                bail!("--io: {} is a file: name a folder", dir.display());
            }
            let profile = request_engine_profile(&mut options).context("--io needs the engine's profiler")?;
            let engine_dir = tempfile::Builder::new()
                .prefix("mge-io-")
                .tempdir()
                .context("--io: cannot create a temporary folder for the engine's dump")?;
            let text = engine_dir.path().join(TEXT_FILE);
            options.io_dump = Some(match args.io_format {
                IoFormat::Bin => IoDump::Binary(engine_dir.path().to_path_buf()),
                IoFormat::Txt => IoDump::Text(text),
            });
            Some((dir, profile, engine_dir))
        }
    };
    let lite = load_runtime(&args.engine, global)?;

    let engine_output = silence_stdout(global.verbose);
    let mut session = Session::load(&lite, &model, Outputs::Real, &options)?;
    let mut written = Vec::new();
    if let Some(file) = &args.layout_transform_model {
        let staged = staged_beside(file)?;
        session.dump_layout_transform_model(staged.path())?;
        staged
            .persist(file)
            .with_context(|| format!("cannot write {}", file.display()))?;
        written.push(format!("layout-transformed model  {}", file.display()));
    }
    if let Some(dir) = &args.testcases {
        let count = dump_testcases(&lite, &model, &session, dir)?;
        written.push(format!("testcases  {count} in {}", dir.display()));
    }
    if args.outputs.is_none() && io.is_none() {
        drop(engine_output);
        return emit(&(written.join("\n") + "\n"));
    }

    let first_testcase = model.testcases().next().filter(|_| !args.no_testcase);
    let feeds = feeds_or_first_testcase(
        &lite,
        first_testcase,
        &args.model,
        &specs,
        &session,
        &args.feeds,
        global,
    )?;
    session.feed(&feeds)?;
    let once = Plan {
        warmup: 0,
        iterations: 1,
        duration: None,
        verbose: global.verbose,
    };
    session.measure(&once, &mut ())?;
    let outputs = session.read_outputs()?;
    save_algo_cache(&lite, &args.engine)?;
    // The engine finishes its dumps when the network goes.
    drop(session);
    drop(engine_output);

    if let Some(dir) = &args.outputs {
        write_tensors(dir, &outputs).context("--outputs")?;
        written.push(format!("outputs  {} in {}", outputs.len(), dir.display()));
    }
    if let Some((dir, profile, engine_dir)) = io {
        let graph = executed_graph(&profile)?;
        std::fs::create_dir_all(dir).with_context(|| format!("--io: cannot create the folder {}", dir.display()))?;
        let model_name = args.model.display().to_string();
        let index = match args.io_format {
            IoFormat::Bin => convert_binary(&graph, engine_dir.path(), dir, &model_name)?,
            IoFormat::Txt => {
                let text = std::fs::read(engine_dir.path().join(TEXT_FILE)).context("the engine wrote no text dump")?;
                write_atomically(&dir.join(TEXT_FILE), &text)?;
                index_text(&graph, dir, &model_name)?
            }
        };
        let mut operators: Vec<&str> = index.vars.iter().map(|var| var.operator.as_str()).collect();
        operators.dedup();
        written.push(format!(
            "io dump  {} vars of {} operators in {} (index.json in execution order)",
            index.vars.len(),
            operators.len(),
            dir.display()
        ));
    }
    emit(&(written.join("\n") + "\n"))
}

/// Each testcase's tensors as `DIR/INDEX/INPUT.npy`; the expected value of an
/// output as `DIR/INDEX/OUTPUT.expect.npy`: one set, written whole or not at
/// all. Returns the number of testcases.
fn dump_testcases(lite: &Lite, model: &ModelFile, session: &Session, dir: &Path) -> Result<usize> {
    let mut files = Vec::new();
    for (index, graph) in model.testcases().enumerate() {
        let values: Vec<(String, HostTensor)> = testcase_values(lite, graph, &session.testcase_inputs())
            .with_context(|| format!("testcase {index}"))?
            .into_iter()
            .map(|(name, value)| match name.strip_suffix(EXPECTATION_SUFFIX) {
                Some(output) => (format!("{output}.expect"), value),
                None => (name, value),
            })
            .collect();
        for (_, file, tensor) in npy_files(&values) {
            files.push((Path::new(&index.to_string()).join(file), tensor.to_npy()));
        }
    }
    let count = model.testcase_count();
    write_set(dir, files).context("--testcases")?;
    Ok(count)
}
