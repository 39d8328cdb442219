//! `mge dump`: a model's tensors written out: its outputs, every var of one
//! run (the engine's io dump, indexed), its embedded testcases, or the model
//! itself after the engine's global layout transform.

use std::path::Path;

use anyhow::{bail, Context, Result};
use tempfile::{TempDir, TempPath};

use super::prepare::{prepare, Prepared, Testcases};
use super::settings::ModelSettings;
use super::Global;
use crate::cli::{DumpArgs, IoFormat};
use crate::engine::{IoDump, Lite, NetworkOptions};
use crate::iodump::{convert_binary, index_text, read_raw_index, refuse_unless_raw, Index, TEXT_FILE};
use crate::model::{ModelFile, EXPECTATION_SUFFIX};
use crate::output_files::{ensure_writable, npy_files, staged_beside, write_atomically, write_set, write_tensors};
use crate::profile::{executed_vars, request_engine_profile};
use crate::report::dump::{DumpReport, Written};
use crate::report::print;
use crate::runner::testcase::testcase_values;
use crate::runner::{Plan, Session};
use crate::tensor::HostTensor;

pub fn dump(args: DumpArgs, global: &Global) -> Result<()> {
    if let (Some(raw), Some(dir)) = (&args.convert, &args.io) {
        return print(
            &DumpReport {
                written: vec![convert_raw(raw, dir, args.io_format)?],
            },
            false,
        );
    }
    let settings = ModelSettings::from_args(&args.model, global)?;
    let testcases = Testcases::unless(args.no_testcase, Testcases::FeedFirst);
    let (mut prepared, io) = prepare(&settings, testcases, global, |opened, options| {
        check_targets(&args, &settings.path, &opened.model, options, global)?;
        args.io
            .as_deref()
            .map(|dir| IoRequest::new(dir, args.io_format, options))
            .transpose()
    })?;
    let mut written = write_from_the_model(&prepared, &args)?;
    if args.outputs.dir.is_none() && io.is_none() {
        // Nothing ran: no fast-run cache to save.
        drop(prepared);
        return print(&DumpReport { written }, false);
    }
    let feeds = prepared.feeds(global)?;
    prepared.session.feed(&feeds)?;
    prepared.session.measure(&Plan::once(global.verbose), &mut ())?;
    let outputs = prepared.session.read_outputs()?;
    // The engine finishes its dumps when the network goes.
    prepared.finish()?;
    if let Some(dir) = &args.outputs.dir {
        write_tensors(dir, &outputs).context("--outputs")?;
        written.push(Written::Outputs {
            count: outputs.len(),
            dir: dir.display().to_string(),
        });
    }
    if let Some(io) = io {
        written.push(io.convert(&settings.path)?);
    }
    print(&DumpReport { written }, false)
}

/// What must hold before the engine starts, and the options the targets need.
fn check_targets(
    args: &DumpArgs,
    path: &Path,
    model: &ModelFile,
    options: &mut NetworkOptions,
    global: &Global,
) -> Result<()> {
    if args.testcases.is_some() && !model.is_container() {
        bail!(
            "--testcases: {} embeds no testcases (it is not a container dumped with input_data)",
            path.display()
        );
    }
    if let Some(file) = &args.layout_transform_model {
        ensure_writable(file).context("--layout-transform-model")?;
        if !options.layout_transform {
            options.layout_transform = true;
            global.note("--layout-transform-model turns on the engine's global layout transform");
        }
    }
    Ok(())
}

/// What only needs the loaded model: the layout-transformed model and the
/// embedded testcases.
fn write_from_the_model(prepared: &Prepared, args: &DumpArgs) -> Result<Vec<Written>> {
    let mut written = Vec::new();
    if let Some(file) = &args.layout_transform_model {
        let staged = staged_beside(file)?;
        prepared.session.dump_layout_transform_model(staged.path())?;
        staged
            .persist(file)
            .with_context(|| format!("cannot write {}", file.display()))?;
        written.push(Written::LayoutTransformedModel {
            file: file.display().to_string(),
        });
    }
    if let Some(dir) = &args.testcases {
        let count = dump_testcases(&prepared.lite, &prepared.model, &prepared.session, dir)?;
        written.push(Written::Testcases {
            count,
            dir: dir.display().to_string(),
        });
    }
    Ok(written)
}

/// `--io DIR`: the engine writes its dump into a temporary folder; DIR is
/// made only after the run, from the dump and the vars the profiler saw run.
struct IoRequest<'a> {
    dir: &'a Path,
    format: IoFormat,
    profile: TempPath,
    engine_dir: TempDir,
}

impl IoRequest<'_> {
    fn new<'a>(dir: &'a Path, format: IoFormat, options: &mut NetworkOptions) -> Result<IoRequest<'a>> {
        if dir.exists() && !dir.is_dir() {
            bail!("--io: {} is a file: name a folder", dir.display());
        }
        let profile = request_engine_profile(options).context("--io needs the engine's profiler")?;
        let engine_dir = tempfile::Builder::new()
            .prefix("mge-io-")
            .tempdir()
            .context("--io: cannot create a temporary folder for the engine's dump")?;
        options.io_dump = Some(match format {
            IoFormat::Bin => IoDump::Binary(engine_dir.path().to_path_buf()),
            IoFormat::Txt => IoDump::Text(engine_dir.path().join(TEXT_FILE)),
        });
        Ok(IoRequest {
            dir,
            format,
            profile,
            engine_dir,
        })
    }

    /// DIR from what the engine wrote.
    fn convert(self, model: &Path) -> Result<Written> {
        let vars = executed_vars(&self.profile)?;
        let dir = self.dir;
        std::fs::create_dir_all(dir).with_context(|| format!("--io: cannot create the folder {}", dir.display()))?;
        let model_name = model.display().to_string();
        let index = match self.format {
            IoFormat::Bin => convert_binary(vars, self.engine_dir.path(), dir, &model_name)?,
            IoFormat::Txt => {
                let text =
                    std::fs::read(self.engine_dir.path().join(TEXT_FILE)).context("the engine wrote no text dump")?;
                write_atomically(&dir.join(TEXT_FILE), &text)?;
                index_text(vars, dir, &model_name)?
            }
        };
        Ok(Written::IoDump {
            vars: index.vars.len(),
            operators: operator_count(&index),
            dir: dir.display().to_string(),
        })
    }
}

/// `--convert RAW_DIR --io DIR`: a raw io dump from elsewhere in the format `--io` writes.
fn convert_raw(raw: &Path, dir: &Path, format: IoFormat) -> Result<Written> {
    if format != IoFormat::Bin {
        bail!("--convert writes .npy files: --io-format txt is the engine's own text, which only a run writes");
    }
    if !raw.is_dir() {
        bail!("--convert: {} is not a folder", raw.display());
    }
    let index = read_raw_index(raw)?;
    refuse_unless_raw(raw, index.as_ref())?;
    let index = index.expect("refuse_unless_raw passed");
    if dir.exists() && !dir.is_dir() {
        bail!("--io: {} is a file: name a folder", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("--io: cannot create the folder {}", dir.display()))?;
    let index = convert_binary(index.vars, raw, dir, &raw.display().to_string())?;
    Ok(Written::ConvertedIoDump {
        vars: index.vars.len(),
        operators: operator_count(&index),
        from: raw.display().to_string(),
        dir: dir.display().to_string(),
    })
}

/// How many operators made the vars of `index` (listed in order, so each once).
fn operator_count(index: &Index) -> usize {
    let mut operators: Vec<&str> = index.vars.iter().map(|var| var.operator.as_str()).collect();
    operators.dedup();
    operators.len()
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
