//! `mge compare A.mge B.mge` and `mge compare MODEL --b-options ARGS`: both
//! runs in supervised child processes (`mge dump --io --outputs`) on the same
//! feeds, then their outputs compared and their vars walked to the first
//! divergence.

use std::mem::discriminant;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::cli::{parse_engine_options, TwoRunArgs};
use crate::commands::settings::{EngineSettings, FeedSettings};
use crate::commands::Global;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, Rules};
use crate::engine::Device;
use crate::input_files;
use crate::options::EngineOption;
use crate::output_files::{claim_set, StagedSet};
use crate::report::compare::{RunSide, TwoRunReport};
use crate::runtime;
use crate::supervise::command::MgeCommand;
use crate::supervise::parent::{How, Interrupted, Muted, Next, Supervisor};
use crate::supervise::Scratch;

/// One of the two runs.
struct Run {
    name: &'static str,
    model: PathBuf,
    options: Vec<EngineOption>,
    /// Where `options` run it.
    device: Device,
    naive: bool,
}

impl Run {
    fn side(&self) -> RunSide {
        RunSide {
            model: self.model.display().to_string(),
            options: self.options.iter().flat_map(EngineOption::args).collect(),
            naive_kernels: self.naive,
        }
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

/// Whether any option that only two runs take was given.
pub fn wants_runs(args: &TwoRunArgs) -> bool {
    args.a_options.is_some()
        || args.b_options.is_some()
        || args.b_naive
        || args.keep.is_some()
        || args.no_testcase
        || args.deadline.timeout.is_some()
        || !args.feeds.inputs.is_empty()
        || !args.engine.given.is_empty()
}

/// `mge compare A.mge [B.mge]`: the two runs, on the same feeds.
pub struct TwoRuns {
    a: Run,
    b: Run,
    feeds: FeedSettings,
    /// `--keep DIR`.
    keep: Option<PathBuf>,
    /// Feed a container `#rand` rather than its first testcase (`--no-testcase`).
    no_testcase: bool,
    /// Of each run.
    timeout: Option<Duration>,
}

impl TwoRuns {
    /// Model A and B (or A again), and the options of the runs.
    pub fn from_args(a: PathBuf, b: Option<PathBuf>, args: TwoRunArgs, global: &Global) -> Result<TwoRuns> {
        let (a, b) = two_runs(a, b, &args, global)?;
        Ok(TwoRuns {
            a,
            b,
            feeds: FeedSettings::from_args(&args.feeds)?,
            keep: args.keep,
            no_testcase: args.no_testcase,
            timeout: args.deadline.timeout,
        })
    }

    /// Runs both in supervised children and compares their outputs and vars.
    pub fn compare(&self, rules: Rules, global: &Global) -> Result<TwoRunReport> {
        let (a, b) = (&self.a, &self.b);
        let located = runtime::locate(&global.runtime)?;
        // Here, in one line, rather than as a run's failure.
        for run in [a, b] {
            runtime::ensure_runs_on(&located, run.device)?;
        }
        // The runs read them: claimed here, so that neither --keep nor stdout takes one.
        for model in [&a.model, &b.model] {
            input_files::claim(model)?;
        }
        self.feeds.claim_files()?;
        if let Some(dir) = &self.keep {
            claim_set("--keep", dir).with_context(|| format!("--keep {}", dir.display()))?;
            if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
                bail!(
                    "--keep {}: the folder is not empty; name a new or empty one",
                    dir.display()
                );
            }
        }
        if self.feeds.given.is_empty() {
            global.note(format!(
                "no --input given: both runs are fed the same #rand values (--seed {}), or a container's testcase 0",
                self.feeds.options.seed
            ));
        }
        let staged = self.keep.as_deref().map(StagedSet::new).transpose()?;
        // A scratch folder as the supervisor's: the next mge removes it should this one be killed.
        let scratch = Scratch::new()?;
        let root = staged.as_ref().map_or(scratch.path(), StagedSet::path).to_path_buf();
        for run in [a, b] {
            global.note(format!("{}: {}", run.name, run.side().describe()));
            let folder = root.join(run.name);
            std::fs::create_dir(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
            let mut command = MgeCommand::dump_io(&run.model, &folder.join("io"), &folder.join("outputs"))
                .feeds(&self.feeds.given, &self.feeds.options)
                .engine(&run.options)
                .runtime(Ok(&located))
                .verbose(global.verbose);
            if self.no_testcase {
                command = command.no_testcase();
            }
            if run.naive {
                command = command.naive_kernels();
            }
            supervise(&command, run, self.timeout, global.verbose)?;
        }
        let side = |run: &Run, what: &str| Side::open(&root.join(run.name).join(what));
        let mut outputs = compare_sides(&side(a, "outputs")?, &side(b, "outputs")?, &rules)?;
        for row in &mut outputs {
            // `NAME.npy`, as the runs wrote each output: named by the output.
            if let Some(stem) = row.name.strip_suffix(".npy") {
                row.name = stem.to_string();
            }
        }
        let vars = compare_sides(&side(a, "io")?, &side(b, "io")?, &rules.for_values())?;
        rules.check_names(outputs.iter().chain(&vars).map(|row| row.name.as_str()))?;
        if let (Some(staged), Some(dir)) = (staged, &self.keep) {
            staged.commit().with_context(|| format!("--keep {}", dir.display()))?;
        }
        Ok(TwoRunReport::new(
            (a.side(), b.side()),
            rules,
            outputs,
            differing_sources(&vars),
            first_divergence(&vars),
            vars,
            self.keep.as_deref(),
        ))
    }
}

/// The two runs `args` ask for: two models, or one under two sets of options.
fn two_runs(a: PathBuf, b: Option<PathBuf>, runs: &TwoRunArgs, global: &Global) -> Result<(Run, Run)> {
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
    let common = &runs.engine.given;
    let side = |name: &'static str, model: PathBuf, own: &Option<String>, naive: bool| -> Result<Run> {
        let own = match own {
            Some(text) => parse_engine_options(text).map_err(|err| anyhow::anyhow!("--{name}-options {err}"))?,
            None => Vec::new(),
        };
        let options = merged(common, own);
        let settings = EngineSettings::from_given(options.clone(), global).with_context(|| format!("run {name}"))?;
        if naive && settings.network.device != Device::Cpu {
            bail!(
                "--b-naive: megdnn's naive kernels are the CPU's; run b is on {}",
                settings.network.device
            );
        }
        Ok(Run {
            name,
            model,
            options,
            device: settings.network.device,
            naive,
        })
    };
    Ok((
        side("a", a, &runs.a_options, false)?,
        side("b", model_b, &runs.b_options, runs.b_naive)?,
    ))
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

/// Runs one side's child to its end; a failure names the side.
fn supervise(command: &MgeCommand, run: &Run, timeout: Option<Duration>, verbose: bool) -> Result<()> {
    let mut child = Supervisor::spawn(command, false, true)?;
    if verbose {
        child.show_engine_output();
    }
    let deadline = timeout.map(|limit| (std::time::Instant::now() + limit, limit));
    let what = format!("run {} ({})", run.name, run.side().describe());
    loop {
        match child.next(deadline, &mut Muted) {
            // The dump's own report: not ours to print.
            Next::Reply(_) => {}
            Next::Exited(0) => return Ok(()),
            Next::Exited(_) => bail!("{what}: {}", child.error().unwrap_or("it failed")),
            Next::Failed(failure) => match failure.how {
                How::Interrupted(signal) => return Err(Interrupted(signal).into()),
                _ => bail!("{what}: {failure}"),
            },
        }
    }
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
