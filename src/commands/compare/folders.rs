//! `mge compare OLD_DIR NEW_DIR` on two folders of models: models paired by
//! their path under each folder, each pair run as one pair of models is
//! (`runs`: outputs, then timing), one row each. Outputs run `-j` pairs at a
//! time; timing runs one pair at a time, after every pair's outputs, so that
//! no timing shares the machine with other work of ours.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::runs::RunsSettings;
use super::structure::structure_of;
use super::timing::time_pair;
use super::two_runs::TwoRuns;
use crate::cli::Shard;
use crate::compare::Rules;
use crate::input_files;
use crate::interrupt::Interrupted;
use crate::pool::share_out;
use crate::report::compare::folders::{FolderReport, FolderTiming, PairRow, PairStatus};
use crate::report::compare::two_runs::RunsCompared;
use crate::report::junit;
use crate::settings::models::{models_under, shard_of};
use crate::settings::Global;
use crate::supervise::parent::hint_on_the_line;
use crate::supervise::Scratch;
use crate::text::{counted, path_text};

/// The models under two folders, listed once (when the settings are made):
/// every model under either folder (those of `--shard` only), by its path
/// under its folder, and which folders hold it.
pub struct FolderModels {
    places: Vec<(PathBuf, Place)>,
}

/// One model's place in the folders.
enum Place {
    Both,
    OnlyInA,
    OnlyInB,
}

impl FolderModels {
    /// The models under `a` and `b` when they are two folders of models
    /// rather than of tensors: both folders, and a `*.mge` file under either
    /// (a folder of tensors or an io dump holds none); `None` otherwise.
    pub fn list(a: &Path, b: &Path, shard: Option<Shard>) -> Result<Option<FolderModels>> {
        if !a.is_dir() || !b.is_dir() {
            return Ok(None);
        }
        let (in_a, in_b) = (models_under(a)?, models_under(b)?);
        if in_a.is_empty() && in_b.is_empty() {
            return Ok(None);
        }
        let all: Vec<PathBuf> = in_a.union(&in_b).cloned().collect();
        let mine = match shard {
            Some(shard) => shard_of(&all, shard),
            None => all,
        };
        let places = mine
            .into_iter()
            .map(|model| {
                let place = match (in_a.contains(&model), in_b.contains(&model)) {
                    (true, true) => Place::Both,
                    (true, false) => Place::OnlyInA,
                    _ => Place::OnlyInB,
                };
                (model, place)
            })
            .collect();
        Ok(Some(FolderModels { places }))
    }

    /// The runs read them: claimed before any run, so that neither --junit
    /// nor stdout takes one.
    fn claim(&self, folders: &[PathBuf; 2]) -> Result<()> {
        let [dir_a, dir_b] = folders;
        for (model, place) in &self.places {
            match place {
                Place::Both => folders
                    .iter()
                    .try_for_each(|dir| input_files::claim(&dir.join(model)))?,
                Place::OnlyInA => input_files::claim(&dir_a.join(model))?,
                Place::OnlyInB => input_files::claim(&dir_b.join(model))?,
            }
        }
        Ok(())
    }
}

/// A model under the folders, and what its pair's outputs gave once run
/// (a model under both folders only).
struct FolderRow<'a> {
    model: &'a Path,
    place: &'a Place,
    outputs: Option<Result<RunsCompared, String>>,
}

impl FolderRow<'_> {
    /// The model's files under the two folders.
    fn pair(&self, [dir_a, dir_b]: &[PathBuf; 2]) -> [PathBuf; 2] {
        [dir_a.join(self.model), dir_b.join(self.model)]
    }
}

/// The report of two folders of models: every pair's outputs, `jobs` pairs
/// at a time, then every pair's timing, one pair at a time.
pub fn compare_folders(
    settings: &RunsSettings,
    folders: &[PathBuf; 2],
    models: &FolderModels,
    jobs: usize,
    rules: Rules,
    junit: Option<&Path>,
    global: &Global,
) -> Result<FolderReport> {
    let two = &settings.two;
    let [dir_a, dir_b] = folders;
    models.claim(folders)?;
    two.claim_feeds()?;
    junit::claim(junit)?;
    two.note_feeds(global);
    let mut rows: Vec<FolderRow> = models
        .places
        .iter()
        .map(|(model, place)| FolderRow {
            model,
            place,
            outputs: None,
        })
        .collect();
    compare_outputs_of(two, folders, &mut rows, jobs, &rules)?;
    let compared = || rows.iter().filter_map(|row| row.outputs.as_ref()?.as_ref().ok());
    // A rule that names a tensor must name one of some pair's.
    rules.check_names(compared().flat_map(RunsCompared::names))?;
    let timed = compared().count();
    if let (Some(timing), true) = (&settings.timing, timed > 0) {
        global.note(format!(
            "timing {} one at a time, {} each",
            counted(timed, "pair"),
            timing.describe()
        ));
    }
    let mut pairs = Vec::new();
    for row in rows {
        let name = path_text(row.model);
        let [a, b] = row.pair(folders);
        pairs.push(match (row.place, row.outputs) {
            (Place::OnlyInA, _) => PairRow::one_sided(name, PairStatus::OnlyInA),
            (Place::OnlyInB, _) => PairRow::one_sided(name, PairStatus::OnlyInB),
            (Place::Both, outputs) => {
                let mut pair = match outputs.expect("every pair ran") {
                    Err(error) => PairRow::failed(name, error),
                    Ok(runs) => {
                        let timing = match &settings.timing {
                            Some(timing) => time_pair(two, [&a, &b], timing, &name)?,
                            None => Ok(None),
                        };
                        PairRow::compared(name, runs, timing)
                    }
                };
                pair.structure = structure_of([&a, &b], two.openings()).ok();
                pair
            }
        });
    }
    let timing = settings.timing.as_ref().map(|timing| FolderTiming {
        rounds: timing.budget.is_none().then(|| timing.looks.most()),
        budget_s: timing.budget.map(|budget| budget.as_secs_f64()),
        min_effect_pct: timing.min_effect,
        max_slowdown_pct: timing.max_slowdown,
    });
    Ok(FolderReport::new(
        (two.side(0, dir_a), two.side(1, dir_b)),
        rules,
        timing,
        pairs,
    ))
}

/// Each pair's outputs compared, `jobs` pairs at a time, into its row.
fn compare_outputs_of(
    two: &TwoRuns,
    folders: &[PathBuf; 2],
    rows: &mut [FolderRow],
    jobs: usize,
    rules: &Rules,
) -> Result<()> {
    // The runs' files: the next mge removes them should this one be killed.
    let scratch = Scratch::new()?;
    let pairs: Vec<(usize, [PathBuf; 2])> = rows
        .iter()
        .enumerate()
        .filter(|(_, row)| matches!(row.place, Place::Both))
        .map(|(at, row)| (at, row.pair(folders)))
        .collect();
    share_out(
        pairs.len(),
        jobs,
        "run the pairs",
        |_: &mut (), index| {
            let (_, [a, b]) = &pairs[index];
            let root = scratch.path().join(index.to_string());
            std::fs::create_dir(&root).with_context(|| format!("cannot create {}", root.display()))?;
            let outcome = two.compare_outputs([a, b], &root, rules, None);
            // Each pair's runs hold a model's io dump: gone once compared.
            let _ = std::fs::remove_dir_all(&root);
            pair_outcome(outcome)
        },
        |()| {},
        |index, outcome| {
            rows[pairs[index].0].outputs = Some(outcome);
            Ok(())
        },
    )
}

/// A pair's outputs, or the line that says why it has none; an
/// interruption ends the command instead.
fn pair_outcome(outcome: Result<RunsCompared>) -> Result<Result<RunsCompared, String>> {
    match outcome {
        Ok(runs) => Ok(Ok(runs)),
        Err(err) if err.is::<Interrupted>() => Err(err),
        // A row of the table: the hint on the same line, as check's rows have it.
        Err(err) => Ok(Err(hint_on_the_line(&format!("{err:#}")))),
    }
}
