//! `mge dump`: a model's tensors written out: its outputs, every var of one
//! run (the engine's io dump, indexed), its embedded testcases, or the model
//! itself after the engine's global layout transform.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tempfile::{TempDir, TempPath};

use crate::cli::{DumpArgs, IoFormat};
use crate::engine::{EngineError, IoDump, Lite, NetworkOptions};
use crate::exit::NonFinite;
use crate::input_files;
use crate::iodump::{
    convert_binary, failed_at, index_text, read_raw_index, refuse_unless_raw, text_vars, Converted, DumpFormat,
    Heading, Index, IndexVar, TEXT_FILE,
};
use crate::loading::{prepare, Prepared, Testcases};
use crate::model::{EngineNames, GraphOperator, ModelFile, Quantization, EXPECTATION_SUFFIX};
use crate::output_checks::finite::warn_non_finite;
use crate::output_files::{claim_file, claim_set, npy_files, write_atomically, write_set, write_tensors, StagedSet};
use crate::profile::{executed_vars, request_engine_profile};
use crate::report::dump::{DumpReport, Written};
use crate::report::made_by::Making;
use crate::report::print;
use crate::runner::testcase::testcase_values;
use crate::runner::{RunPlan, Session};
use crate::settings::Global;
use crate::settings::ModelSettings;
use crate::supervise::MAX_TEXT;
use crate::tensor::HostTensor;
use crate::text::{counted, cut};

/// What `mge dump` was asked, turned once from `DumpArgs`.
pub enum DumpSettings {
    /// A model run, and what of it to write.
    Run(Box<DumpRun>),
    /// `--convert RAW_DIR --io DIR`: a raw io dump from elsewhere; no model runs.
    Convert { raw: PathBuf, dir: PathBuf },
}

/// `mge dump MODEL` and its targets.
pub struct DumpRun {
    model: ModelSettings,
    /// What a container's testcases are for (`--no-testcase`).
    testcases: Testcases,
    /// `--outputs DIR`.
    outputs: Option<PathBuf>,
    /// `--io DIR` and `--io-format`.
    io: Option<(PathBuf, DumpFormat)>,
    /// `--testcases DIR`.
    testcases_dir: Option<PathBuf>,
    /// `--layout-transform-model FILE`.
    layout_transform_model: Option<PathBuf>,
    check_finite: bool,
}

impl DumpSettings {
    pub fn from_args(args: DumpArgs, global: &Global) -> Result<DumpSettings> {
        let format = match args.io_format {
            IoFormat::Bin => DumpFormat::Binary,
            IoFormat::Txt => DumpFormat::Text,
        };
        if let (Some(raw), Some(dir)) = (args.convert, &args.io) {
            if format != DumpFormat::Binary {
                bail!("--convert writes .npy files: --io-format txt is the engine's own text, which only a run writes");
            }
            return Ok(DumpSettings::Convert { raw, dir: dir.clone() });
        }
        Ok(DumpSettings::Run(Box::new(DumpRun {
            model: ModelSettings::from_args(&args.model, global)?,
            testcases: Testcases::unless(args.no_testcase, Testcases::FeedFirst),
            outputs: args.outputs.dir,
            io: args.io.map(|dir| (dir, format)),
            testcases_dir: args.testcases,
            layout_transform_model: args.layout_transform_model,
            check_finite: args.finite.check_finite,
        })))
    }
}

pub fn dump(settings: DumpSettings, global: &Global) -> Result<()> {
    match settings {
        DumpSettings::Convert { raw, dir } => print(
            &DumpReport {
                written: vec![convert_raw(&raw, &dir)?],
            },
            false,
            &Making::without_engine(),
        ),
        DumpSettings::Run(dump) => dump.run(global),
    }
}

impl DumpRun {
    fn run(&self, global: &Global) -> Result<()> {
        let path = &self.model.path;
        let (prepared, io) = prepare(&self.model, self.testcases, global, |opened, options| {
            self.check_targets(&opened.model, options, global)?;
            self.io
                .as_ref()
                .map(|(dir, format)| IoRequest::new(dir, *format, &opened.model, options))
                .transpose()
        })?;
        let transformed = match &self.layout_transform_model {
            Some(_) => Some(dump_layout_transformed(&prepared)?),
            None => None,
        };
        let mut written = Vec::new();
        // The names the engine's dumps hold under placeholders, kept past the network.
        let names = prepared.session.engine_names().clone();
        if let Some(dir) = &self.testcases_dir {
            let count = dump_testcases(&prepared.lite, &prepared.model, &prepared.session, dir)?;
            written.push(Written::Testcases {
                count,
                dir: dir.display().to_string(),
            });
        }
        let outputs = match self.outputs.is_some() || io.is_some() {
            true => match run_once(prepared, global) {
                Ok(outputs) => outputs,
                // The engine's refusal still keeps the vars it dumped before it.
                Err(err) => match io {
                    Some(io) => return Err(io.keep_failed(path, &names, err)),
                    None => return Err(err),
                },
            },
            // Nothing ran: no fast-run cache to save.
            false => {
                drop(prepared);
                Vec::new()
            }
        };
        // Written once the engine's output is off stdout again, which may be the target.
        if let (Some(file), Some(staged)) = (&self.layout_transform_model, transformed) {
            write_layout_transformed(file, &staged, &names)?;
            written.insert(
                0,
                Written::LayoutTransformedModel {
                    file: file.display().to_string(),
                },
            );
        }
        let mut non_finite = warn_non_finite(&outputs, "", global);
        if let Some(dir) = &self.outputs {
            write_tensors(dir, &outputs).context("--outputs")?;
            written.push(Written::Outputs {
                count: outputs.len(),
                dir: dir.display().to_string(),
            });
        }
        if let Some(io) = io {
            let output_names = outputs.iter().map(|(name, _)| name.clone()).collect();
            let (done, first_non_finite) = io.convert((path, output_names), &names)?;
            written.push(done);
            if let Some(found) = first_non_finite {
                global.warn(&found);
                // Where the values went wrong, rather than where they ended up.
                non_finite = Some(found);
            }
        }
        print(&DumpReport { written }, false, &Making::without_engine())?;
        match non_finite {
            Some(found) if self.check_finite => Err(NonFinite(found).into()),
            _ => Ok(()),
        }
    }

    /// What must hold before the engine starts, and the options the targets need.
    fn check_targets(&self, model: &ModelFile, options: &mut NetworkOptions, global: &Global) -> Result<()> {
        if self.testcases_dir.is_some() && !model.is_container() {
            bail!(
                "--testcases: {} embeds no testcases (it is not a container dumped with input_data)",
                self.model.path.display()
            );
        }
        let sets = [
            ("--outputs", self.outputs.as_ref()),
            ("--io", self.io.as_ref().map(|(dir, _)| dir)),
            ("--testcases", self.testcases_dir.as_ref()),
        ];
        for (option, dir) in sets {
            if let Some(dir) = dir {
                claim_set(option, dir).with_context(|| format!("{option} {}", dir.display()))?;
            }
        }
        if let Some(file) = &self.layout_transform_model {
            claim_file("--layout-transform-model", file).context("--layout-transform-model")?;
            if !options.layout_transform {
                options.layout_transform = true;
                global.note("--layout-transform-model turns on the engine's global layout transform");
            }
        }
        Ok(())
    }
}

/// One run of the model on its feeds, and its outputs; the network goes
/// after it, so the engine finishes its dumps.
fn run_once(mut prepared: Prepared, global: &Global) -> Result<Vec<(String, HostTensor)>> {
    let feeds = prepared.feeds(global)?;
    prepared.session.feed(&feeds)?;
    prepared.session.measure(&RunPlan::once(global.verbose), &mut ())?;
    let outputs = prepared.session.read_outputs()?;
    prepared.finish()?;
    Ok(outputs)
}

/// Writes the model the engine wrote to `staged` to `file`, under the
/// model's own names (the engine knew `names` under placeholders).
fn write_layout_transformed(file: &Path, staged: &Path, names: &EngineNames) -> Result<()> {
    let model = input_files::read(staged, &input_files::ENGINE_DUMP)?;
    let model = ModelFile::restore_names(model, names).context("--layout-transform-model")?;
    write_atomically(file, &model).context("--layout-transform-model")
}

/// The model as the global layout transform left it, in a temporary file the
/// engine writes (the target is written once the engine is done).
fn dump_layout_transformed(prepared: &Prepared) -> Result<TempPath> {
    let staged = tempfile::Builder::new()
        .prefix("mge-transformed-")
        .tempfile()
        .context("cannot create a temporary file for the layout-transformed model")?
        .into_temp_path();
    prepared.session.dump_layout_transform_model(&staged)?;
    Ok(staged)
}

/// `--io DIR`: the engine writes its dump into a temporary folder; DIR is
/// made only after the run, from the dump and the vars the profiler saw run,
/// as one set of files.
/// What MegEngine's binary io dumper asserts of each var it writes, which a
/// tensor of no elements fails (megdnn calls empty layouts not contiguous).
const BINARY_DUMPER_EMPTY: &str = "value.layout().is_contiguous()";

struct IoRequest<'a> {
    dir: &'a Path,
    format: DumpFormat,
    /// The model graph's quantized vars, whose scales the engine's dump leaves out.
    quantized: HashMap<String, Quantization>,
    /// The model graph's operators, to say where a run the engine refused stopped.
    operators: Vec<GraphOperator>,
    profile: TempPath,
    engine_dir: TempDir,
}

impl IoRequest<'_> {
    fn new<'a>(
        dir: &'a Path,
        format: DumpFormat,
        model: &ModelFile,
        options: &mut NetworkOptions,
    ) -> Result<IoRequest<'a>> {
        let quantized = model
            .quantized_vars()
            .context("--io: cannot read the quantized vars' scales from the model graph")?;
        let operators = model
            .operators()
            .context("--io: cannot read the operators of the model graph")?;
        let profile = request_engine_profile(options).context("--io needs the engine's profiler")?;
        let engine_dir = tempfile::Builder::new()
            .prefix("mge-io-")
            .tempdir()
            .context("--io: cannot create a temporary folder for the engine's dump")?;
        options.io_dump = Some(match format {
            DumpFormat::Binary => IoDump::Binary(engine_dir.path().to_path_buf()),
            DumpFormat::Text => IoDump::Text(engine_dir.path().join(TEXT_FILE)),
        });
        Ok(IoRequest {
            dir,
            format,
            quantized,
            operators,
            profile,
            engine_dir,
        })
    }

    /// DIR from what the engine wrote, by the names of the model (the engine
    /// knew `names` under placeholders); with the first var, in execution
    /// order, that holds NaN or infinities, said in a line.
    fn convert(self, (model, outputs): (&Path, Vec<String>), names: &EngineNames) -> Result<(Written, Option<String>)> {
        let vars = executed_vars(&self.profile, names)?;
        let dir = self.dir;
        let mut set = StagedSet::new(dir).context("--io")?;
        let model_name = model.display().to_string();
        let converted = match self.format {
            DumpFormat::Binary => convert_binary(
                vars,
                self.engine_dir.path(),
                &mut set,
                Heading {
                    model: &model_name,
                    outputs,
                    failed_at: None,
                },
                &self.quantized,
            )?,
            DumpFormat::Text => {
                let text = input_files::read(&self.engine_dir.path().join(TEXT_FILE), &input_files::ENGINE_DUMP)?;
                set.add(TEXT_FILE.into(), &names.restore_bytes(&text))?;
                let heading = Heading {
                    model: &model_name,
                    outputs,
                    failed_at: None,
                };
                index_text(vars, &mut set, heading)?
            }
        };
        set.commit().context("--io")?;
        let Converted {
            index,
            first_non_finite,
        } = converted;
        let first_non_finite = first_non_finite.map(|(var, counted)| {
            format!(
                "var '{}' of operator '{}' is the first, in execution order, to hold NaN or infinities: {counted}",
                var.name, var.operator
            )
        });
        let written = Written::IoDump {
            vars: index.vars.len(),
            operators: operator_count(&index),
            dir: dir.display().to_string(),
        };
        Ok((written, first_non_finite))
    }
}

impl IoRequest<'_> {
    /// `err`, the engine's refusal of the run, said with DIR, which holds
    /// the vars the engine dumped before it and where it stopped. Any other
    /// error leaves DIR unwritten, as does a failure to write it.
    fn keep_failed(self, model: &Path, names: &EngineNames, err: anyhow::Error) -> anyhow::Error {
        let Some(engine) = err.chain().find_map(|cause| cause.downcast_ref::<EngineError>()) else {
            return err;
        };
        let message = cut(&engine.message, MAX_TEXT).into_owned();
        let by_dumper = self.format == DumpFormat::Binary && message.contains(BINARY_DUMPER_EMPTY);
        let dir = self.dir;
        match self.write_partial(model, names, message) {
            Ok(index) => {
                let failed = index.failed_at.as_ref().expect("a partial index says where it stopped");
                let operator = match (&failed.operator, &failed.op_type) {
                    (Some(operator), Some(op_type)) => format!(" at operator '{operator}' ({op_type})"),
                    _ => String::new(),
                };
                let what = if by_dumper {
                    format!(
                        "the engine's binary io dumper refused a var{operator}: it cannot write an empty \
                         tensor (no elements), which the model itself may give; --io-format txt dumps it"
                    )
                } else {
                    format!("the run failed inside the engine{operator}")
                };
                err.context(format!(
                    "{what}; {} holds the {} dumped before it (index.json: failed_at)",
                    dir.display(),
                    counted(index.vars.len(), "var")
                ))
            }
            Err(not_written) => err.context(format!(
                "the run failed inside the engine, and --io could not keep the vars before it: {not_written:#}"
            )),
        }
    }

    /// DIR from what the engine dumped before it refused the run: in var-id
    /// order (the engine wrote no profile), with `failed_at` in the index.
    fn write_partial(self, model: &Path, names: &EngineNames, message: String) -> Result<Index> {
        let mut set = StagedSet::new(self.dir).context("--io")?;
        let model_name = model.display().to_string();
        let restored = |var: IndexVar| IndexVar {
            name: names.restore(&var.name).into_owned(),
            operator: names.restore(&var.operator).into_owned(),
            inputs: var
                .inputs
                .iter()
                .map(|input| names.restore(input).into_owned())
                .collect(),
            ..var
        };
        let heading = |vars: &[IndexVar]| Heading {
            model: &model_name,
            outputs: Vec::new(),
            failed_at: Some(failed_at(&self.operators, vars, &message)),
        };
        let index = match self.format {
            DumpFormat::Binary => {
                let dumped = read_raw_index(self.engine_dir.path())?.map_or_else(Vec::new, |index| index.vars);
                let vars: Vec<IndexVar> = dumped.into_iter().map(restored).collect();
                convert_binary(
                    vars.clone(),
                    self.engine_dir.path(),
                    &mut set,
                    heading(&vars),
                    &self.quantized,
                )?
                .index
            }
            DumpFormat::Text => {
                let path = self.engine_dir.path().join(TEXT_FILE);
                let text = input_files::read_if_present(&path, &input_files::ENGINE_DUMP)?.unwrap_or_default();
                let text = names.restore_bytes(&text);
                let vars = text_vars(&String::from_utf8_lossy(&text));
                set.add(TEXT_FILE.into(), &text)?;
                let heading = heading(&vars);
                index_text(vars, &mut set, heading)?.index
            }
        };
        set.commit().context("--io")?;
        Ok(index)
    }
}

/// `--convert RAW_DIR --io DIR`: a raw io dump from elsewhere in the format `--io` writes.
fn convert_raw(raw: &Path, dir: &Path) -> Result<Written> {
    if !raw.is_dir() {
        bail!("--convert: {} is not a folder", raw.display());
    }
    let index = read_raw_index(raw)?;
    refuse_unless_raw(raw, index.as_ref())?;
    let index = index.expect("refuse_unless_raw passed");
    // After the raw files were read: a folder that holds them is refused.
    let mut set = StagedSet::new(dir).context("--io")?;
    // A raw dump comes without its model: its quantized vars' scales are unknown.
    let heading = Heading {
        model: &raw.display().to_string(),
        outputs: index.outputs,
        failed_at: None,
    };
    let index = convert_binary(index.vars, raw, &mut set, heading, &HashMap::new())?.index;
    set.commit().context("--io")?;
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
