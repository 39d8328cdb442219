//! `--repro DIR --reduce` (`run`, `check`): the smallest part of the model
//! found to fail as the whole model does, written into the failure's folder
//! as `reduced.mge`, which the folder's `command.sh` then runs.
//!
//! The failure is first reproduced from inside the folder: the model fed
//! the recorded values under the same engine options, in a supervised
//! child. Outputs that hold NaN or infinities (`--check-finite`) are then
//! traced to the first var, in execution order, that holds them (the
//! engine's io dump of that run), and the graph is cut there. A crash, an
//! exit, the engine's error or a hang (or a var the graph does not name) is cut by bisection
//! over the operators that compute, in the order the model lists them (the
//! order MegEngine dumped them in, one they can run in): each try is the
//! graph cut at an operator's first var, run in a supervised child of its
//! own under the deadline; the shortest that still fails is kept.
//!
//! Every verdict is seen twice before it is relied on: the command's
//! failure again from inside the folder, each part's failure or pass in a
//! second run. A failure that does not come back, or a part that fails once
//! and not again, makes the failure flaky: no part is then claimed to
//! reproduce it. The graph is cut by mge's model writer (`model::cut`): a
//! model of the part alone, its weights among it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::feeds::{load_npy, FeedOptions};
use crate::interrupt::Interrupted;
use crate::iodump::{read_index, Index, IndexVar};
use crate::mge_command::MgeCommand;
use crate::model::{CutGraph, CutPoint, ModelFile};
use crate::options::EngineOption;
use crate::report::repro::{feed_specs_in, Folder, Reduction};
use crate::runtime::Located;
use crate::supervise::child_run::{run_child, Watch};
use crate::supervise::parent::Outcome;
use crate::supervise::repro_record::fed_in;
use crate::supervise::Ending;
use crate::tensor::{format_shape, DType};

/// The file of a try's graph in the folder, and of the reduced model.
const REDUCED: &str = "reduced.mge";

/// Without `--timeout`, a try may take this many times what the whole
/// model's reproduction took (a part of the graph does less), and at least `MIN_TRY`.
const TRY_FACTOR: u32 = 3;
const MIN_TRY: Duration = Duration::from_secs(30);

/// The failure a command saw, which the reduction looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// The engine took the process down.
    Crash,
    /// The run was stopped at its deadline, or stuck.
    Hang,
    /// Either: `check` reports both as the engine's failure.
    Engine,
    /// The engine returned an error as it ran.
    EngineError,
    /// An output held NaN or infinities under `--check-finite`.
    NonFinite,
}

/// Why `--reduce` cuts no part of a failure that is none of `Failed`'s.
pub const NOT_CUT: &str = "--reduce cuts crashes, exits, hangs and non-finite outputs (--check-finite), and \
                           the engine's errors; an output that differs from what was expected (--expect, a \
                           testcase's own) and mge's own refusal are not reduced";

impl Failed {
    /// The failure `--reduce` looks for where a child ended as `outcome`, or why it looks for none.
    pub fn of(outcome: &Outcome) -> Result<Failed, &'static str> {
        match outcome {
            Outcome::Crashed(_) => Ok(Failed::Crash),
            Outcome::Hung(_) => Ok(Failed::Hang),
            Outcome::Ended(Ending::NonFinite { .. }) => Ok(Failed::NonFinite),
            Outcome::Ended(Ending::EngineRefused { .. }) => Ok(Failed::EngineError),
            Outcome::Ran | Outcome::Ended(Ending::CheckFailed { .. } | Ending::Refused { .. }) => Err(NOT_CUT),
        }
    }

    fn is(self, outcome: &Outcome) -> bool {
        match (self, Failed::of(outcome)) {
            (Failed::Engine, Ok(Failed::Crash | Failed::Hang)) => true,
            (failed, Ok(seen)) => failed == seen,
            (_, Err(_)) => false,
        }
    }
}

/// What the reduction runs, as the folder's command does.
pub struct Reducer<'a> {
    /// The model the command ran.
    pub model: &'a Path,
    /// Where the feeds were recorded in the folder (`feeds`, `feeds/N` for testcase N).
    pub feeds: &'a str,
    pub seed: u64,
    pub warmup: usize,
    pub iterations: u64,
    pub check_finite: bool,
    /// `--timeout`, which every try has.
    pub timeout: Option<Duration>,
    pub runtime: &'a Located,
    pub verbose: bool,
}

/// A verdict that did not hold when seen again: the failure comes and goes,
/// and the reduction ends, claiming no part.
#[derive(Debug)]
struct Flaky(String);

impl fmt::Display for Flaky {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Flaky {}

impl Reducer<'_> {
    /// Looks for the smaller reproducer of `failed` and gives it to `folder`,
    /// or why there is none: anything but the user's interruption ends there.
    pub fn reduce(&self, folder: &mut Folder, failed: Failed) -> Result<()> {
        let reduction = match self.find(folder, failed) {
            Ok(reduction) => reduction,
            Err(err) if err.downcast_ref::<Interrupted>().is_some() => return Err(err),
            Err(err) => match err.downcast::<Flaky>() {
                Ok(Flaky(why)) => Reduction::Flaky(why),
                Err(err) => Reduction::NotReduced(format!("{err:#}")),
            },
        };
        folder.reduced(reduction);
        Ok(())
    }

    fn find(&self, folder: &Folder, failed: Failed) -> Result<Reduction> {
        let model = ModelFile::read(self.model, None)?;
        let points = model.cut_points()?;
        let staged = folder.staged();
        let mut tries = Tries {
            reducer: self,
            folder: &staged,
            options: folder.placed_options(),
            fed: fed_in(&staged.join(self.feeds))?,
            model: self.model_in(&staged)?,
            runtime: Located {
                path: std::path::absolute(&self.runtime.path)?,
                ..self.runtime.clone()
            },
            deadline: self.timeout,
            count: 0,
        };
        let started = Instant::now();
        let whole = tries.run(tries.command(&tries.model, None))?;
        match &whole {
            whole if failed.is(whole) => {}
            // mge's own refusal (a file it cannot read) or the engine's error
            // says nothing of whether another failure comes back.
            Outcome::Ended(why) if why.is_error() => {
                return Ok(Reduction::NotReduced(format!(
                    "the model did not run again from inside the folder on its recorded feeds: {}", why.said()
                )))
            }
            whole => {
                return Err(Flaky(format!(
                    "the failure did not come back when the model ran again from inside the folder on its recorded feeds: {whole}"
                ))
                .into())
            }
        }
        let took = started.elapsed() * TRY_FACTOR;
        tries.deadline = self.timeout.or(Some(took.max(MIN_TRY)));
        tries.count = 0;
        if let Outcome::Ended(Ending::NonFinite { .. }) = whole {
            if let Some(reduction) = tries.at_first_non_finite(&model, &whole)? {
                return Ok(reduction);
            }
        }
        tries.bisect(&model, &points, &whole)
    }

    /// The model as the folder's command names it: its copy, else its path.
    fn model_in(&self, folder: &Path) -> Result<PathBuf> {
        Ok(match folder.join("model.mge").is_file() {
            true => PathBuf::from("model.mge"),
            false => std::path::absolute(self.model)?,
        })
    }
}

/// The runs of one reduction, from inside the folder.
struct Tries<'a> {
    reducer: &'a Reducer<'a>,
    folder: &'a Path,
    /// The engine options as the folder's command gives them.
    options: &'a [EngineOption],
    /// The recorded feeds: each input's name and file.
    fed: Vec<(String, String)>,
    model: PathBuf,
    /// The runtime, its path absolute: the tries run inside the folder.
    runtime: Located,
    deadline: Option<Duration>,
    /// The parts of the graph tried so far.
    count: usize,
}

impl Tries<'_> {
    /// The run of `model` on the recorded feeds of `inputs` (all: `None`), as
    /// a command from inside the folder.
    fn command(&self, model: &Path, inputs: Option<&[String]>) -> MgeCommand {
        let reducer = self.reducer;
        let fed: Vec<(String, String)> = self
            .fed
            .iter()
            .filter(|(name, _)| inputs.is_none_or(|kept| kept.contains(name)))
            .cloned()
            .collect();
        let feeds = FeedOptions {
            seed: reducer.seed,
            resize_input: false,
        };
        MgeCommand::run(model)
            .feeds(&feed_specs_in(reducer.feeds, &fed), &feeds)
            .engine(self.options)
            .runs(reducer.warmup, reducer.iterations)
            .no_testcase()
            .check_finite(reducer.check_finite)
            .seconds("--timeout", reducer.timeout)
    }

    /// Runs `command` from inside the folder, supervised under the deadline.
    fn run(&self, command: MgeCommand) -> Result<Outcome> {
        let command = command
            .runtime(Ok(&self.runtime))
            .verbose(self.reducer.verbose)
            .in_folder(self.folder);
        Ok(run_child(&command, Watch::reporting(self.deadline, self.reducer.verbose))?.outcome)
    }

    /// Runs the part of the graph `cut`, written as the folder's
    /// `reduced.mge`, twice: whether it fails as `whole` did (`fails`), and
    /// how it ended the first time. A part that fails in one run and not in
    /// the other is `Flaky`.
    fn try_cut(&mut self, cut: &CutGraph, whole: &Outcome) -> Result<(bool, Outcome)> {
        let file = self.folder.join(REDUCED);
        std::fs::write(&file, &cut.graph).with_context(|| format!("cannot write {}", file.display()))?;
        self.count += 1;
        let command = self.command(Path::new(REDUCED), Some(&cut.inputs));
        let runs = self
            .run(command.clone())
            .and_then(|first| Ok((first, self.run(command)?)));
        // The folder's files are written at the end, the reduced model among them.
        let _ = std::fs::remove_file(&file);
        let (first, second) = runs?;
        match (fails(&first, whole), fails(&second, whole)) {
            (once, again) if once == again => Ok((once, first)),
            _ => Err(Flaky(format!(
                "the part of the model that computes var '{}' ({} of its {} operators) failed in one of two runs \
                 and not in the other: {first}; then: {second}",
                cut.var, cut.operators, cut.of
            ))
            .into()),
        }
    }

    /// `cut`, which fails as `outcome` says (the whole model as `whole`), as the folder's reproducer.
    fn reduced(
        &self,
        cut: CutGraph,
        (outcome, whole): (&Outcome, &Outcome),
        found: String,
        index: Option<&Index>,
    ) -> Reduction {
        let fails = match outcome.fails_like(whole) {
            true => format!("It fails alike: {outcome}."),
            false => format!(
                "It fails otherwise than the whole model, which ran into its deadline ({whole}): {outcome}. \
                 A run stopped at its deadline may not have come to the failure that a part, doing less, comes to sooner."
            ),
        };
        let about = format!(
            "reduced.mge is the part of the model that computes var '{}': {} of its {} operators, {} of them computing \
             (the others its inputs and constants), in the order the model lists them. {fails}\n\
             The cut is at {}.\n{found}",
            cut.var,
            cut.operators,
            cut.of,
            cut.computing,
            operator_at(&cut, index)
        );
        Reduction::Reduced {
            command: self.command(Path::new(REDUCED), Some(&cut.inputs)),
            graph: cut.graph,
            about,
        }
    }

    /// The graph cut at the first var, in execution order, whose values in the
    /// engine's io dump of the whole model are not all finite, where that
    /// part fails as `whole` did; `None` where the dump does not tell.
    fn at_first_non_finite(&mut self, model: &ModelFile, whole: &Outcome) -> Result<Option<Reduction>> {
        let dump = tempfile::Builder::new()
            .prefix("mge-reduce-")
            .tempdir()
            .context("cannot make a folder for the engine's io dump")?;
        let io = dump.path().join("io");
        let command = MgeCommand::dump_io(&self.model, &io, &dump.path().join("outputs"))
            .feeds(
                &feed_specs_in(self.reducer.feeds, &self.fed),
                &FeedOptions {
                    seed: self.reducer.seed,
                    resize_input: false,
                },
            )
            .engine(self.options)
            .no_testcase();
        if !matches!(self.run(command)?, Outcome::Ran) {
            return Ok(None);
        }
        let Some(index) = read_index(&io)? else {
            return Ok(None);
        };
        let Some(var) = first_non_finite(&index, &io)? else {
            return Ok(None);
        };
        let Some(id) = model.var_named(&var.name)? else {
            return Ok(None);
        };
        let cut = model.cut_at(id)?;
        let (failing, outcome) = self.try_cut(&cut, whole)?;
        if !failing {
            return Ok(None);
        }
        let found = format!(
            "Found by the engine's io dump of the whole model, in which var '{}' is the first, in execution order, to hold NaN or infinities.",
            var.name
        );
        Ok(Some(self.reduced(cut, (&outcome, whole), found, Some(&index))))
    }

    /// The shortest prefix of `points` whose cut fails as `whole` did
    /// (`fails`), by bisection: the whole model fails, no part at all is taken to pass.
    fn bisect(&mut self, model: &ModelFile, points: &[CutPoint], whole: &Outcome) -> Result<Reduction> {
        let (mut passing, mut failing) = (0, points.len() + 1);
        let mut found = None;
        while failing - passing > 1 {
            let middle = (passing + failing) / 2;
            let cut = model.cut_at(points[middle - 1].var)?;
            let (failing_here, outcome) = self.try_cut(&cut, whole)?;
            match failing_here {
                true => {
                    failing = middle;
                    found = Some((cut, outcome));
                }
                false => passing = middle,
            }
        }
        let tries = match self.count {
            1 => "1 part".to_string(),
            count => format!("{count} parts"),
        };
        Ok(match found {
            Some((cut, outcome)) => {
                let how = format!(
                    "Found by bisection over the model's {} computing operators in the order it lists them: \
                     {tries} tried, each run twice, each run in a process of its own.",
                    points.len()
                );
                self.reduced(cut, (&outcome, whole), how, None)
            }
            None => Reduction::NotReduced(format!(
                "no part of the graph cut before its end failed ({tries} tried by bisection, each run twice, \
                 each run in a process of its own)"
            )),
        })
    }
}

/// Whether a part of the model that ended as `outcome` fails as the whole
/// model did (`whole`): alike, or, where the whole ran into its deadline, by
/// crashing: a run stopped at its deadline may not have come to the failure
/// that a part, doing less, comes to sooner (a deadline the whole model
/// needed is not the part's). Any other end is a pass.
fn fails(outcome: &Outcome, whole: &Outcome) -> bool {
    outcome.fails_like(whole) || matches!((outcome, whole), (Outcome::Crashed(_), Outcome::Hung(_)))
}

/// The first var of `index` (in execution order) whose values, in the dump
/// folder `io`, are not all finite.
fn first_non_finite<'a>(index: &'a Index, io: &Path) -> Result<Option<&'a IndexVar>> {
    for var in &index.vars {
        let floating = var.dtype.as_deref().is_some_and(|dtype| dtype.starts_with("float"));
        let Some(file) = var.file.as_ref().filter(|_| floating) else {
            continue;
        };
        if load_npy(&io.join(file), DType::F32)?.non_finite().any() {
            return Ok(Some(var));
        }
    }
    Ok(None)
}

/// The operator at the cut, for README: its name and type, and its inputs'
/// shapes, as the io dump saw them where there is one, else as the graph stores them.
fn operator_at(cut: &CutGraph, index: Option<&Index>) -> String {
    let dumped = index.and_then(|index| {
        let var = index.vars.iter().find(|var| var.name == cut.var)?;
        let shapes: Vec<String> = var
            .inputs
            .iter()
            .map(|input| {
                let shape = index.vars.iter().find(|var| var.name == *input)?.shape.as_ref()?;
                Some(format_shape(shape))
            })
            .collect::<Option<_>>()?;
        Some(format!(
            "operator '{}', of type {} (as the engine runs it), whose inputs had shapes {} in the run",
            var.operator,
            var.op_type,
            shapes.join(", ")
        ))
    });
    dumped.unwrap_or_else(|| {
        let name = match cut.operator.is_empty() {
            true => "the operator that writes it".to_string(),
            false => format!("operator '{}'", cut.operator),
        };
        let shapes: Vec<String> = cut
            .input_shapes
            .iter()
            .map(|shape| shape.as_deref().map_or("(not stored)".to_string(), format_shape))
            .collect();
        format!(
            "{name}, of type {}, whose inputs have shapes {} (as the model stores them)",
            cut.op_type,
            shapes.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--reduce` cuts is read from how the child said it ended, never
    /// from its words: a check whose message ends as `--check-finite`'s does
    /// is no non-finite output, and the engine's error is one to cut where
    /// mge's own refusal is not.
    #[test]
    fn what_is_cut_is_the_ending_not_its_words() {
        let ended = |ending| Outcome::Ended(ending);
        let said = |message: &str| message.to_string();
        assert_eq!(
            Failed::of(&ended(Ending::NonFinite {
                found: said("output 'o' holds 1 NaN")
            })),
            Ok(Failed::NonFinite)
        );
        for not_cut in [
            Ending::CheckFailed {
                message: said("output 'x (--check-finite)'"),
            },
            Ending::Refused {
                message: said("number of elements do not match in reshape"),
            },
        ] {
            assert_eq!(Failed::of(&ended(not_cut)), Err(NOT_CUT));
        }
        let engine = ended(Ending::EngineRefused {
            message: said("number of elements do not match in reshape"),
        });
        assert_eq!(Failed::of(&engine), Ok(Failed::EngineError));
        let other_words = ended(Ending::EngineRefused {
            message: said("another"),
        });
        assert!(engine.fails_like(&other_words) && !engine.fails_like(&Outcome::Ran));
    }
}
