//! `mge compare A.mge B.mge` and `mge compare MODEL --b-options ARGS`: both
//! runs in supervised child processes (`mge dump --io --outputs`) on the same
//! feeds, then their outputs compared and their vars walked to the first
//! divergence; then both timed in rounds (`timing`).

use std::mem::discriminant;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::structure::structure_of;
use super::timing::{time_pair, TimingSettings};
use crate::cli::{parse_side_options, TwoRunArgs};
use crate::commands::settings::{EngineSettings, FeedSettings};
use crate::commands::Global;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, Rules};
use crate::engine::Device;
use crate::feeds::FeedOptions;
use crate::input_files;
use crate::interrupt::Interrupted;
use crate::mge_command::MgeCommand;
use crate::options::EngineOption;
use crate::output_files::{claim_set, StagedSet};
use crate::report::compare::{RunSide, RunsCompared, TwoRunReport};
use crate::report::repro::{self, Case, Folder, Repro};
use crate::runtime::{self, Choice, Located};
use crate::supervise::child::say;
use crate::supervise::parent::{ChildStdout, Failure, How, Muted, Next, Supervisor};
use crate::supervise::Scratch;
use crate::text::{path_text, quoted_list};

/// How one side runs, whatever model it runs.
pub struct Run {
    pub name: &'static str,
    options: Vec<EngineOption>,
    naive: bool,
    runtime: Located,
    /// The side's own runtime, where it names one (`--lite-lib` in its options, `--a-runtime VERSION`).
    own_runtime: Option<Choice>,
}

impl Run {
    /// Side `name`: the options of both runs (`common`) with its own words
    /// (`--a-options`), which may name its runtime library, or the version
    /// of its runtime (`--a-runtime`); else the runtime `mge` would use.
    fn new(
        name: &'static str,
        common: &[EngineOption],
        words: &Option<String>,
        version: &Option<String>,
        naive: bool,
        global: &Global,
    ) -> Result<Run> {
        let (own, lite_lib) = match words {
            Some(text) => {
                let words = parse_side_options(text).map_err(|err| anyhow::anyhow!("--{name}-options {err}"))?;
                (words.engine.given, words.lite_lib)
            }
            None => (Vec::new(), None),
        };
        let options = merged(common, own);
        let settings = EngineSettings::from_given(options.clone(), global).with_context(|| format!("run {name}"))?;
        if naive && settings.network.device != Device::Cpu {
            bail!(
                "--b-naive: megdnn's naive kernels are the CPU's; run b is on {}",
                settings.network.device
            );
        }
        let own = match (lite_lib, version) {
            (Some(_), Some(_)) => {
                bail!("run {name}: give --{name}-runtime or --lite-lib in --{name}-options, not both")
            }
            (Some(lite_lib), None) => Some(Choice {
                lite_lib: Some(lite_lib),
                version: None,
            }),
            (None, Some(version)) => {
                if runtime::Version::parse(version).is_none() {
                    bail!(
                        "run {name}: --{name}-runtime {version:?}: expected a version such as 1.13.0 or 1.13.2+cu118"
                    );
                }
                Some(Choice {
                    lite_lib: None,
                    version: Some(version.clone()),
                })
            }
            (None, None) => None,
        };
        let runtime =
            runtime::locate(own.as_ref().unwrap_or(&global.runtime)).with_context(|| format!("run {name}"))?;
        // Here, in one line, rather than as a run's failure: the line every
        // command says, naming the side only where its runtime is its own.
        let preflight = runtime::ensure_runs_on(&runtime, settings.network.device);
        match own {
            Some(_) => preflight.with_context(|| format!("run {name}"))?,
            None => preflight?,
        }
        Ok(Run {
            name,
            options,
            naive,
            runtime,
            own_runtime: own,
        })
    }
}

/// Both sides, and what they share.
pub struct TwoRuns {
    pub runs: [Run; 2],
    feeds: FeedSettings,
    /// Feed a container `#rand` rather than its first testcase (`--no-testcase`).
    no_testcase: bool,
    pub timeout: Option<Duration>,
    verbose: bool,
    /// How both are timed; `None` with `--no-timing` or `--b-naive`.
    pub timing: Option<TimingSettings>,
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
    runs.a_options.is_some()
        || runs.b_options.is_some()
        || runs.b_naive
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
        || runs.deadline.timeout.is_some()
        || runs.repro.dir.is_some()
        || !runs.feeds.inputs.is_empty()
        || !runs.engine.given.is_empty()
}

impl TwoRuns {
    /// Both sides as `runs` ask: the options of both with each side's own,
    /// each side's runtime located.
    pub fn from_args(runs: &TwoRunArgs, global: &Global) -> Result<TwoRuns> {
        if runs.by_op.is_some() && runs.b_naive {
            bail!("--by-op profiles both sides' speed, and --b-naive runs are not timed (megdnn's naive kernels are a reference for outputs)");
        }
        let common = &runs.engine.given;
        let a = Run::new("a", common, &runs.a_options, &runs.a_runtime, false, global)?;
        let b = Run::new("b", common, &runs.b_options, &runs.b_runtime, runs.b_naive, global)?;
        Ok(TwoRuns {
            runs: [a, b],
            feeds: FeedSettings::from_args(&runs.feeds)?,
            no_testcase: runs.no_testcase,
            timeout: runs.deadline.timeout,
            verbose: global.verbose,
            timing: TimingSettings::from_args(runs, global),
        })
    }

    /// Claims the files the feeds read as inputs, so that no output replaces one.
    pub fn claim_feeds(&self) -> Result<()> {
        self.feeds.claim_files()
    }

    /// Says what both runs are fed when no `--input` is given.
    pub fn note_feeds(&self, global: &Global) {
        if self.feeds.given.is_empty() {
            global.note(format!(
                "no --input given: both runs are fed the same #rand values (--seed {}), or a container's testcase 0",
                self.feeds.options.seed
            ));
        }
    }

    /// Side `at` running `model`, as the report describes it.
    pub fn side(&self, at: usize, model: &Path) -> RunSide {
        let run = &self.runs[at];
        RunSide {
            model: path_text(model),
            options: run.options.iter().flat_map(EngineOption::shown).collect(),
            naive_kernels: run.naive,
            runtime: run.own_runtime.as_ref().map(|_| run.runtime.path.display().to_string()),
        }
    }

    /// `base` (an `mge` command on side `at`'s model) with the shared feeds
    /// and the side's options, kernels and runtime.
    pub fn command(&self, at: usize, base: MgeCommand) -> MgeCommand {
        let run = &self.runs[at];
        let command = base
            .feeds(&self.feeds.given, &self.feeds.options)
            .engine(&run.options)
            .runtime(Ok(&run.runtime));
        match run.naive {
            true => command.naive_kernels(),
            false => command,
        }
    }

    /// Runs both sides on `models` (A's and B's), each dumping every var and
    /// its outputs into `root/a` and `root/b`, and compares what they wrote.
    /// A run that fails is an error that names it. A `witness` has each side
    /// record what it fed the engine, and keeps what each printed and how one died.
    pub fn compare_outputs(
        &self,
        models: [&Path; 2],
        root: &Path,
        rules: &Rules,
        mut witness: Option<&mut Witness>,
    ) -> Result<RunsCompared> {
        let started = Instant::now();
        for (at, model) in models.iter().enumerate() {
            let folder = root.join(self.runs[at].name);
            std::fs::create_dir(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
            let dump = MgeCommand::dump_io(model, &folder.join("io"), &folder.join("outputs"));
            let mut command = self.command(at, dump).verbose(self.verbose);
            if self.no_testcase {
                command = command.no_testcase();
            }
            if let Some(witness) = &witness {
                command = command.record_for_repro(&witness.records[at]);
            }
            let what = format!("run {} ({})", self.runs[at].name, self.side(at, model).describe());
            let ran = self.supervise(&command, &what)?;
            if let Some(witness) = witness.as_deref_mut() {
                witness
                    .transcripts
                    .push(format!("run {}:\n{}", self.runs[at].name, ran.transcript));
                witness.death = ran.died.as_ref().map(|died| (at, format!("{what}: {died}")));
            }
            if let Some(died) = ran.died {
                // The failure itself, under what it was: its hint stays a line of its own.
                return Err(anyhow::Error::new(died).context(what));
            }
        }
        let side = |run: &Run, what: &str| Side::open(&root.join(run.name).join(what));
        let [a, b] = &self.runs;
        let mut outputs = compare_sides(&side(a, "outputs")?, &side(b, "outputs")?, rules)?;
        for row in &mut outputs {
            // `NAME.npy`, as the runs wrote each output: named by the output.
            if let Some(stem) = row.name.strip_suffix(".npy") {
                row.name = stem.to_string();
            }
        }
        let vars = compare_sides(&side(a, "io")?, &side(b, "io")?, &rules.for_values())?;
        Ok(RunsCompared {
            outputs,
            differing_sources: differing_sources(&vars),
            first_divergence: first_divergence(&vars),
            vars,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Runs one side's child to its end: its error says `what` it was, as
    /// does its death (crashed, hung, exited from inside the engine).
    fn supervise(&self, command: &MgeCommand, what: &str) -> Result<Ran> {
        let mut child = Supervisor::spawn(command, false, ChildStdout::Discarded)?;
        if self.verbose {
            child.show_engine_output();
        }
        let deadline = self.timeout.map(|limit| (Instant::now() + limit, limit));
        let died = match child.next(deadline, &mut Muted) {
            Next::Reply(_) => unreachable!("its stdout is discarded"),
            Next::Exited(0) => None,
            Next::Exited(code) => bail!("{what}: {}", child.why_it_exited(code)),
            Next::Failed(failure) => match failure.how {
                How::Interrupted(signal) => return Err(Interrupted(signal).into()),
                _ => Some(failure),
            },
        };
        Ok(Ran {
            transcript: child.transcript(),
            died,
        })
    }
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
    super::claim_junit(junit)?;
    match repro_dir {
        Some(dir) => repro::claim(dir),
        None => Ok(()),
    }
}

/// The report of one pair of models (`compare A.mge B.mge`, or one model
/// twice), their runs kept in `keep`.
pub fn compare_runs(
    two: &TwoRuns,
    models: &[PathBuf; 2],
    keep: Option<&Path>,
    repro_dir: Option<&Path>,
    rules: Rules,
    junit: Option<&Path>,
    global: &Global,
) -> Result<TwoRunReport> {
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
    rules.check_names(
        compared
            .outputs
            .iter()
            .chain(&compared.vars)
            .map(|row| row.name.as_str()),
    )?;
    let differing: Vec<String> = compared
        .outputs
        .iter()
        .filter(|row| row.status.failed())
        .map(|row| row.name.clone())
        .collect();
    if let (Some(witness), false) = (&witness, differing.is_empty()) {
        let failure = format!(
            "{} of {} outputs differ beyond {}: {}",
            differing.len(),
            compared.outputs.len(),
            rules.describe(),
            quoted_list(&differing)
        );
        reproducing(repro, witness, failure);
    }
    let timing = match &two.timing {
        Some(settings) => time_pair(two, models, settings, "")?.map_err(anyhow::Error::msg)?,
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
        report.structure = structure_of(models)
            .map_err(|err| global.note(format!("the graphs are not compared: {err:#}")))
            .ok();
    }
    Ok(report)
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
        None if runs.a_options.is_none() && runs.b_options.is_none() && !runs.b_naive => bail!(
            "one model runs twice only under two configurations: add --a-options ARGS, --b-options ARGS or --b-naive (or give model B)"
        ),
        None => a.clone(),
    };
    Ok([a, model_b])
}

/// How one side's run went: what it printed on stderr, and how it died if it did.
struct Ran {
    transcript: String,
    died: Option<Failure>,
}

/// What `--repro` keeps of a pair's runs: where each side records what it
/// fed the engine, what each printed, and which died and how.
pub struct Witness {
    records: [PathBuf; 2],
    transcripts: Vec<String>,
    death: Option<(usize, String)>,
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
        let case = Case {
            model: self.models[0],
            record: Some(record.clone()),
            failure: failure.split("\nhint: ").next().unwrap_or_default().to_string(),
            engine_log: witness.transcripts.concat(),
            runtime: Some(&self.two.runs[side].runtime),
            choice: &self.global.runtime,
        };
        let written = repro
            .add(case, |folder| self.reproducing_compare(folder))
            .and_then(|()| repro.finish());
        match written {
            Ok(lines) => lines.iter().for_each(|line| say(line)),
            Err(err) => self.global.warn(format!("{err:#}")),
        }
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

/// The options of both runs with one side's own: a side's option replaces
/// the common one of the same kind (`--threads 1` for a, `--threads 2` for both).
fn merged(common: &[EngineOption], own: Vec<EngineOption>) -> Vec<EngineOption> {
    let mut options: Vec<EngineOption> = common
        .iter()
        .filter(|option| !own.iter().any(|mine| discriminant(*option) == discriminant(mine)))
        .cloned()
        .collect();
    options.extend(own);
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::GraphLayout;

    #[test]
    fn a_side_option_replaces_the_common_one_of_its_kind() {
        let common = [EngineOption::Threads(2), EngineOption::FastRun];
        let own = vec![EngineOption::Threads(1), EngineOption::Layout(GraphLayout::Nchw44)];
        assert_eq!(
            merged(&common, own),
            [
                EngineOption::FastRun,
                EngineOption::Threads(1),
                EngineOption::Layout(GraphLayout::Nchw44)
            ]
        );
    }
}
