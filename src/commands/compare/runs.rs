//! `mge compare A.mge B.mge` and `mge compare MODEL --b-options ARGS`: the
//! two sides (`two_runs`) run on the same feeds, their outputs compared and
//! their vars walked to the first divergence; then both timed in rounds
//! (`timing`); a failing pair's folder written for `--repro`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::structure::structure_of;
use super::timing::{time_pair, TimingSettings};
use super::two_runs::{TwoRuns, Witness};
use crate::cli::TwoRunArgs;
use crate::compare::layers::{by_layer, ByLayer};
use crate::compare::sides::Side;
use crate::compare::Rules;
use crate::feeds::FeedOptions;
use crate::input_files;
use crate::mge_command::MgeCommand;
use crate::output_files::{claim_set, StagedSet};
use crate::report::compare::runs::TwoRunReport;
use crate::report::compare::two_runs::RunsCompared;
use crate::report::junit;
use crate::report::repro::{self, FailingModel, Folder, Repro};
use crate::settings::Global;
use crate::supervise::Scratch;
use crate::text::{differ, part_of, quoted_list};

/// How two runs of models are compared, pair by pair: the sides, and how
/// they are timed.
pub struct RunsSettings {
    pub two: TwoRuns,
    /// How both are timed; `None` with `--no-timing` or `--b-naive`.
    pub timing: Option<TimingSettings>,
    /// `--by-layer`: the two graphs' vars paired by topology and measured.
    pub by_layer: bool,
}

impl RunsSettings {
    pub fn from_args(runs: &TwoRunArgs, global: &Global) -> Result<RunsSettings> {
        if runs.by_op.is_some() && runs.b_naive {
            bail!("--by-op profiles both sides' speed, and --b-naive runs are not timed (megdnn's naive kernels are a reference for outputs)");
        }
        Ok(RunsSettings {
            two: TwoRuns::from_args(runs, global)?,
            timing: TimingSettings::from_args(runs, global),
            by_layer: runs.by_layer,
        })
    }
}

/// Whether `path` names a model to run rather than tensors to read.
pub fn is_model(path: &Path) -> bool {
    let tensors = path
        .extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| ext.eq_ignore_ascii_case("npy") || ext.eq_ignore_ascii_case("npz"));
    path.is_file() && !tensors
}

/// Whether any option that only runs of models take was given.
pub fn wants_runs(runs: &TwoRunArgs) -> bool {
    runs.a_options.is_some() || runs.b_options.is_some() || !runs.engine.given.is_empty() || runs_alone(runs)
}

/// Whether an option was given that runs of models take and the files'
/// structure does not (engine options aside: the key opens a file).
pub fn runs_alone(runs: &TwoRunArgs) -> bool {
    runs.b_naive
        || runs.a_runtime.is_some()
        || runs.b_runtime.is_some()
        || runs.keep.is_some()
        || runs.no_testcase
        || runs.no_timing
        || runs.rounds.is_some()
        || runs.timing_budget.is_some()
        || runs.min_effect.is_some()
        || runs.max_slowdown.is_some()
        || runs.by_op.is_some()
        || runs.by_layer
        || runs.deadline.timeout.is_some()
        || runs.repro.dir.is_some()
        || !runs.feeds.inputs.is_empty()
}

/// Claims what one pair reads (the models, the feeds' files) and writes
/// (`--keep`, which must be new or empty, `--junit`, `--repro`), before any work.
fn claim_files(two: &TwoRuns, models: &[PathBuf; 2], [keep, junit, repro_dir]: [Option<&Path>; 3]) -> Result<()> {
    // Claimed here, so that neither --keep, --junit nor stdout takes one.
    for model in models {
        input_files::claim(model)?;
    }
    two.claim_feeds()?;
    if let Some(dir) = keep {
        claim_set("--keep", dir).with_context(|| format!("--keep {}", dir.display()))?;
        if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
            bail!(
                "--keep {}: the folder is not empty; name a new or empty one",
                dir.display()
            );
        }
    }
    junit::claim(junit)?;
    match repro_dir {
        Some(dir) => repro::claim(dir),
        None => Ok(()),
    }
}

/// The report of one pair of models (`compare A.mge B.mge`, or one model
/// twice), their runs kept in `keep`.
pub fn compare_runs(
    settings: &RunsSettings,
    models: &[PathBuf; 2],
    keep: Option<&Path>,
    repro_dir: Option<&Path>,
    rules: Rules,
    junit: Option<&Path>,
    global: &Global,
) -> Result<TwoRunReport> {
    let two = &settings.two;
    claim_files(two, models, [keep, junit, repro_dir])?;
    two.note_feeds(global);
    let models = [models[0].as_path(), models[1].as_path()];
    for (at, model) in models.iter().enumerate() {
        global.note(format!("{}: {}", two.runs[at].name, two.side(at, model).describe()));
    }
    let staged = keep.map(StagedSet::new).transpose()?;
    // The runs' files: the next mge removes them should this one be killed.
    let scratch = Scratch::new()?;
    let root = staged.as_ref().map_or(scratch.path(), StagedSet::path).to_path_buf();
    let repro = repro_dir.map(Repro::stage).transpose()?;
    let mut witness = repro.as_ref().map(|repro| Witness {
        records: two.runs.each_ref().map(|run| repro.record_folder(run.name)),
        transcripts: Vec::new(),
        death: None,
    });
    let reproducing = |repro: Option<Repro>, witness: &Witness, failure: String| {
        if let Some(repro) = repro {
            Reproducing {
                two,
                models,
                rules: &rules,
                global,
            }
            .write(repro, witness, failure);
        }
    };
    let compared = match two.compare_outputs(models, &root, &rules, witness.as_mut()) {
        Ok(mut compared) if settings.by_layer => {
            compared.by_layer = Some(layer_by_layer(&root)?);
            compared
        }
        Ok(compared) => compared,
        Err(err) => {
            if let Some(
                witness @ Witness {
                    death: Some((_, died)), ..
                },
            ) = &witness
            {
                reproducing(repro, witness, died.clone());
            }
            return Err(err);
        }
    };
    rules.check_names(compared.names())?;
    if let (Some(witness), Some(failure)) = (&witness, outputs_failure(&compared, &rules)) {
        reproducing(repro, witness, failure);
    }
    let timing = match &settings.timing {
        Some(timing) => time_pair(two, models, timing, "")?.map_err(anyhow::Error::msg)?,
        None => None,
    };
    if let (Some(staged), Some(dir)) = (staged, keep) {
        staged.commit().with_context(|| format!("--keep {}", dir.display()))?;
    }
    let mut report = TwoRunReport::new(
        (two.side(0, models[0]), two.side(1, models[1])),
        rules,
        compared,
        timing,
        keep,
    );
    if models[0] != models[1] {
        report.structure = structure_of(models, two.openings())
            .map_err(|err| global.note(format!("the graphs are not compared: {err:#}")))
            .ok();
    }
    Ok(report)
}

/// Both runs' io dumps in `root` paired layer by layer (`--by-layer`).
fn layer_by_layer(root: &Path) -> Result<ByLayer> {
    let dumped = |side: &str| Side::open(&root.join(side).join("io"))?.dumped_tensors();
    by_layer(&dumped("a")?, &dumped("b")?).context("--by-layer")
}

/// The outputs that differ beyond `rules`, in one line; `None` where none does.
fn outputs_failure(compared: &RunsCompared, rules: &Rules) -> Option<String> {
    let differing: Vec<String> = compared
        .outputs
        .iter()
        .filter(|row| row.status.failed())
        .map(|row| row.name.clone())
        .collect();
    (!differing.is_empty()).then(|| {
        format!(
            "{} {} beyond {}: {}",
            part_of(differing.len(), compared.outputs.len(), "output"),
            differ(differing.len()),
            rules.describe(),
            quoted_list(&differing)
        )
    })
}

/// The two models to run: A and B, or A twice under two configurations.
pub fn two_models(a: PathBuf, b: Option<PathBuf>, runs: &TwoRunArgs) -> Result<[PathBuf; 2]> {
    let model_b = match b {
        Some(b) => {
            if !is_model(&b) {
                bail!(
                    "A is a model and B is not ({}): give two models, or two sets of tensors",
                    b.display()
                );
            }
            b
        }
        None if runs.a_options.is_none()
            && runs.b_options.is_none()
            && !runs.b_naive
            && runs.a_runtime.is_none()
            && runs.b_runtime.is_none() =>
        {
            bail!(
                "one model runs twice only under two configurations: add --a-options ARGS, --b-options ARGS, --b-naive, or --a-runtime/--b-runtime VERSION (or give model B)"
            )
        }
        None => a.clone(),
    };
    Ok([a, model_b])
}

/// What `--repro` needs of one pair of models to write its folder.
struct Reproducing<'a> {
    two: &'a TwoRuns,
    models: [&'a Path; 2],
    rules: &'a Rules,
    global: &'a Global,
}

impl Reproducing<'_> {
    /// Writes the folder of the pair, one of whose runs died or whose
    /// outputs differ (`failure`), and says where; one that cannot be
    /// written is a warning.
    fn write(&self, mut repro: Repro, witness: &Witness, failure: String) {
        // The feeds of the run that got to them: both were fed the same.
        let record = witness
            .records
            .iter()
            .find(|record| record.join("feeds").is_dir())
            .unwrap_or(&witness.records[0]);
        // The runtime of the side that died, else A's.
        let side = witness.death.as_ref().map_or(0, |(at, _)| *at);
        let failing = FailingModel {
            model: self.models[0],
            record: Some(record.clone()),
            failure: failure.split("\nhint: ").next().unwrap_or_default().to_string(),
            engine_log: witness.transcripts.concat(),
            runtime: Some(&self.two.runs[side].runtime),
            choice: &self.global.runtime,
        };
        let added = repro.add(failing, |folder| self.reproducing_compare(folder));
        repro.finish(added, |warning| self.global.warn(warning));
    }

    /// The comparison as it goes from inside the folder, outputs only
    /// (`--no-timing`): the models copied (`model.mge`, or `a.mge` and
    /// `b.mge`), the recorded feeds, each side's options whole (the common
    /// ones in both) and its own runtime where it has one.
    fn reproducing_compare(&self, folder: &mut Folder) -> Result<MgeCommand> {
        let two = self.two;
        let [a, b] = &two.runs;
        let two_models = self.models[0] != self.models[1];
        let models = match two_models {
            true => vec![
                folder.model("a.mge", self.models[0])?,
                folder.model("b.mge", self.models[1])?,
            ],
            false => vec![folder.model("model.mge", self.models[0])?],
        };
        let feeds = FeedOptions {
            resize_input: false,
            ..two.feeds.options
        };
        let mut command = MgeCommand::compare().feeds(folder.feeds(), &feeds);
        for run in [a, b] {
            let options = folder.options(Some(run.name), &run.options)?;
            let own = run.own_runtime.as_ref();
            let lite_lib = own
                .and_then(|choice| choice.lite_lib.as_deref())
                .map(std::path::absolute)
                .transpose()?;
            // One model runs twice only under two sets of options, however
            // empty; two models, each under its own.
            if !two_models || !options.is_empty() || lite_lib.is_some() {
                command = command.side_options(run.name, &options, lite_lib.as_deref());
            }
            if let Some(version) = own.and_then(|choice| choice.version.as_deref()) {
                command = command.side_runtime(run.name, version);
            }
        }
        let mut command = command
            .b_naive(b.naive)
            .no_timing()
            .rules(Some(self.rules))
            .seconds("--timeout", two.timeout)
            .models(&models);
        // A container the user fed runs fed, as it did, whatever the record holds.
        if two.no_testcase || !two.feeds.given.is_empty() {
            command = command.no_testcase();
        }
        Ok(command)
    }
}
