//! The two sides of `compare`'s runs of models: how each runs (its options,
//! kernels and runtime), what both share (feeds, deadline), the `mge`
//! command of a side, and both run in supervised children (`mge dump --io
//! --outputs`) on the same feeds, their outputs compared and their vars
//! walked to the first divergence. The timing (`timing`), `--by-op`
//! (`by_op`) and a pair's whole comparison (`runs`) build on these.

use std::mem::discriminant;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::structure::Opening;

use crate::cli::{parse_side_options, TwoRunArgs};
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, unread_differing, Rules};
use crate::engine::Device;
use crate::mge_command::MgeCommand;
use crate::options::EngineOption;
use crate::report::compare::two_runs::{RunSide, RunsCompared};
use crate::runtime::{self, Choice, Located};
use crate::settings::Global;
use crate::settings::{EngineSettings, FeedSettings};
use crate::supervise::child_run::{deadline_after, run_child, ChildRun, Watch};
use crate::supervise::parent::{ChildStdout, Muted, Outcome, Work};
use crate::text::path_text;

/// How one side runs, whatever model it runs.
pub struct SideSetup {
    pub name: &'static str,
    pub(super) options: Vec<EngineOption>,
    pub(super) naive: bool,
    pub(super) runtime: Located,
    /// The side's own runtime, where it names one (`--lite-lib` in its options, `--a-runtime VERSION`).
    pub(super) own_runtime: Option<Choice>,
    /// How its model is opened for the structural diff: its key, as the engine gets it.
    pub opening: Opening,
}

impl SideSetup {
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
    ) -> Result<SideSetup> {
        let (options, lite_lib) = side_options(name, common, words)?;
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
        Ok(SideSetup {
            name,
            options,
            naive,
            runtime,
            own_runtime: own,
            opening: Opening::of(&settings),
        })
    }
}

/// Side `name`'s engine options: those of both runs (`common`) with its own
/// words (`--a-options`), and the runtime library those name.
pub fn side_options(
    name: &str,
    common: &[EngineOption],
    words: &Option<String>,
) -> Result<(Vec<EngineOption>, Option<PathBuf>)> {
    let (own, lite_lib) = match words {
        Some(text) => {
            let words = parse_side_options(text).map_err(|err| anyhow::anyhow!("--{name}-options {err}"))?;
            (words.engine.given, words.lite_lib)
        }
        None => (Vec::new(), None),
    };
    Ok((merged(common, own), lite_lib))
}

/// Both sides, and what they share.
pub struct TwoRuns {
    pub runs: [SideSetup; 2],
    pub(super) feeds: FeedSettings,
    /// Feed a container `#rand` rather than its first testcase (`--no-testcase`).
    pub(super) no_testcase: bool,
    pub timeout: Option<Duration>,
    verbose: bool,
}

impl TwoRuns {
    /// Both sides as `runs` ask: the options of both with each side's own,
    /// each side's runtime located.
    pub fn from_args(runs: &TwoRunArgs, global: &Global) -> Result<TwoRuns> {
        let common = &runs.engine.given;
        let a = SideSetup::new("a", common, &runs.a_options, &runs.a_runtime, false, global)?;
        let b = SideSetup::new("b", common, &runs.b_options, &runs.b_runtime, runs.b_naive, global)?;
        Ok(TwoRuns {
            runs: [a, b],
            feeds: FeedSettings::from_args(&runs.feeds)?,
            no_testcase: runs.no_testcase,
            timeout: runs.deadline.timeout,
            verbose: global.verbose,
        })
    }

    /// How each side's model is opened for the structural diff.
    pub fn openings(&self) -> [&Opening; 2] {
        self.runs.each_ref().map(|run| &run.opening)
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
                witness.death = ran.outcome.failure().map(|died| (at, format!("{what}: {died}")));
            }
            if let Outcome::Crashed(died) | Outcome::Hung(died) = ran.outcome {
                // The failure itself, under what it was: its hint stays a line of its own.
                return Err(anyhow::Error::new(died).context(what));
            }
        }
        let side = |run: &SideSetup, what: &str| Side::open(&root.join(run.name).join(what));
        let [a, b] = &self.runs;
        let mut outputs = compare_sides(&side(a, "outputs")?, &side(b, "outputs")?, rules)?;
        for row in &mut outputs {
            // `NAME.npy`, as the runs wrote each output: named by the output.
            if let Some(stem) = row.name.strip_suffix(".npy") {
                row.name = stem.to_string();
            }
        }
        let (io_a, io_b) = (side(a, "io")?, side(b, "io")?);
        let vars = compare_sides(&io_a, &io_b, &rules.for_values())?;
        Ok(RunsCompared {
            outputs,
            differing_sources: differing_sources(&vars),
            first_divergence: first_divergence(&vars, io_a.outputs()),
            unread_differing: unread_differing(&vars, io_a.outputs()),
            vars,
            by_layer: None,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Runs one side's child to its end: its error says `what` it was; a
    /// run that ran or died (crashed, hung, exited from inside the engine) is returned.
    fn supervise(&self, command: &MgeCommand, what: &str) -> Result<ChildRun> {
        let watch = Watch {
            stdout: ChildStdout::Discarded,
            deadline: deadline_after(self.timeout),
            verbose: self.verbose,
            work: Work::Model,
            watcher: Some(&mut Muted),
        };
        let ran = run_child(command, watch)?;
        if let Outcome::Ended(ending) = &ran.outcome {
            bail!("{what}: {}", ending.said());
        }
        Ok(ran)
    }
}

/// What `--repro` keeps of a pair's runs: where each side records what it
/// fed the engine, what each printed, and which died and how.
pub struct Witness {
    pub(super) records: [PathBuf; 2],
    pub(super) transcripts: Vec<String>,
    pub(super) death: Option<(usize, String)>,
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
