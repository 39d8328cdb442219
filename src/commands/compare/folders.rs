//! `mge compare OLD_DIR NEW_DIR` on two folders of models: models paired by
//! their path under each folder, each pair run as one pair of models is
//! (`runs`: outputs, then timing), one row each. Outputs run `-j` pairs at a
//! time; timing runs one pair at a time, after every pair's outputs, so that
//! no timing shares the machine with other work of ours.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::runs::RunsSettings;
use super::structure::structure_of;
use super::timing::time_pair;
use super::two_runs::TwoRuns;
use crate::cli::Shard;
use crate::commands::check::models::{find_models, shard_of};
use crate::commands::pool::share_out;
use crate::commands::Global;
use crate::compare::Rules;
use crate::input_files;
use crate::interrupt::Interrupted;
use crate::report::compare::{FolderReport, FolderTiming, PairRow, PairStatus, RunsCompared};
use crate::supervise::parent::hint_on_the_line;
use crate::supervise::Scratch;
use crate::text::{counted, path_text};

/// Whether `a` and `b` are two folders of models rather than of tensors: both
/// folders, and a `*.mge` file under either (a folder of tensors or an io
/// dump holds none).
pub fn are_model_folders(a: &Path, b: &Path) -> Result<bool> {
    if !a.is_dir() || !b.is_dir() {
        return Ok(false);
    }
    Ok(!models_under(a)?.is_empty() || !models_under(b)?.is_empty())
}

/// The `*.mge` files under `folder`, by their path under it (as `check` finds them).
fn models_under(folder: &Path) -> Result<BTreeSet<PathBuf>> {
    let mut found = Vec::new();
    find_models(folder, &mut found)?;
    Ok(found
        .into_iter()
        .filter_map(|model| model.strip_prefix(folder).ok().map(Path::to_path_buf))
        .collect())
}

/// One model's place in the folders.
enum Place {
    Both,
    OnlyInA,
    OnlyInB,
}

/// Every model under either folder (those of `shard` only), by its path
/// under its folder, and which folders hold it.
fn places_of_models([dir_a, dir_b]: [&PathBuf; 2], shard: Option<Shard>) -> Result<Vec<(PathBuf, Place)>> {
    let (in_a, in_b) = (models_under(dir_a)?, models_under(dir_b)?);
    let all: Vec<PathBuf> = in_a.union(&in_b).cloned().collect();
    let mine = match shard {
        Some(shard) => shard_of(&all, shard),
        None => all,
    };
    Ok(mine
        .into_iter()
        .map(|model| {
            let place = match (in_a.contains(&model), in_b.contains(&model)) {
                (true, true) => Place::Both,
                (true, false) => Place::OnlyInA,
                _ => Place::OnlyInB,
            };
            (model, place)
        })
        .collect())
}

/// The report of two folders of models: every pair's outputs, `jobs` pairs
/// at a time, then every pair's timing, one pair at a time; the pairs of
/// `shard` only.
pub fn compare_folders(
    settings: &RunsSettings,
    [dir_a, dir_b]: &[PathBuf; 2],
    jobs: usize,
    shard: Option<Shard>,
    rules: Rules,
    junit: Option<&Path>,
    global: &Global,
) -> Result<FolderReport> {
    let two = &settings.two;
    let places = places_of_models([dir_a, dir_b], shard)?;
    // The runs read them: claimed here, so that neither --junit nor stdout takes one.
    for (model, place) in &places {
        match place {
            Place::Both => [dir_a, dir_b]
                .iter()
                .try_for_each(|dir| input_files::claim(&dir.join(model)))?,
            Place::OnlyInA => input_files::claim(&dir_a.join(model))?,
            Place::OnlyInB => input_files::claim(&dir_b.join(model))?,
        }
    }
    two.claim_feeds()?;
    super::claim_junit(junit)?;
    two.note_feeds(global);
    let paired: Vec<&PathBuf> = places
        .iter()
        .filter(|(_, place)| matches!(place, Place::Both))
        .map(|(model, _)| model)
        .collect();
    let models_of = |model: &Path| [dir_a.join(model), dir_b.join(model)];
    let pairs: Vec<[PathBuf; 2]> = paired.iter().map(|model| models_of(model)).collect();
    let compared = compare_outputs_of(two, &pairs, jobs, &rules)?;
    // A rule that names a tensor must name one of some pair's.
    rules.check_names(compared.iter().flatten().flatten().flat_map(RunsCompared::names))?;
    let timed = compared.iter().filter(|outcome| matches!(outcome, Some(Ok(_)))).count();
    if let (Some(timing), true) = (&settings.timing, timed > 0) {
        global.note(format!(
            "timing {} one at a time, {} each",
            counted(timed, "pair"),
            timing.describe()
        ));
    }
    let mut outcomes = paired.iter().zip(compared);
    let mut rows = Vec::new();
    for (model, place) in &places {
        let name = path_text(model);
        rows.push(match place {
            Place::OnlyInA => PairRow::one_sided(name, PairStatus::OnlyInA),
            Place::OnlyInB => PairRow::one_sided(name, PairStatus::OnlyInB),
            Place::Both => {
                let (_, outcome) = outcomes.next().expect("one outcome per pair");
                match outcome.expect("every pair ran") {
                    Err(error) => PairRow::failed(name, error),
                    Ok(runs) => {
                        let timing = match &settings.timing {
                            Some(timing) => {
                                let [a, b] = models_of(model);
                                time_pair(two, [&a, &b], timing, &name)?
                            }
                            None => Ok(None),
                        };
                        PairRow::compared(name, runs, timing)
                    }
                }
            }
        });
        if let (Place::Both, Some(row)) = (place, rows.last_mut()) {
            let [a, b] = models_of(model);
            row.structure = structure_of([&a, &b], two.openings()).ok();
        }
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
        rows,
    ))
}

/// Each pair's outputs compared, `jobs` pairs at a time.
fn compare_outputs_of(
    two: &TwoRuns,
    pairs: &[[PathBuf; 2]],
    jobs: usize,
    rules: &Rules,
) -> Result<Vec<Option<Result<RunsCompared, String>>>> {
    // The runs' files: the next mge removes them should this one be killed.
    let scratch = Scratch::new()?;
    let mut compared: Vec<Option<Result<RunsCompared, String>>> = (0..pairs.len()).map(|_| None).collect();
    share_out(
        pairs.len(),
        jobs,
        "run the pairs",
        |_: &mut (), index| {
            let [a, b] = &pairs[index];
            let root = scratch.path().join(index.to_string());
            std::fs::create_dir(&root).with_context(|| format!("cannot create {}", root.display()))?;
            let outcome = two.compare_outputs([a, b], &root, rules, None);
            // Each pair's runs hold a model's io dump: gone once compared.
            let _ = std::fs::remove_dir_all(&root);
            pair_outcome(outcome)
        },
        |()| {},
        |index, outcome| {
            compared[index] = Some(outcome);
            Ok(())
        },
    )?;
    Ok(compared)
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
