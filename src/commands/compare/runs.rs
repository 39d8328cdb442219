//! `mge compare A.mge B.mge` and `mge compare MODEL --b-options ARGS`: both
//! runs in supervised child processes (`mge dump --io --outputs`) on the same
//! feeds, then their outputs compared and their vars walked to the first
//! divergence.

use std::mem::discriminant;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::cli::{parse_engine_options, CompareArgs, TwoRunArgs};
use crate::commands::settings::{given_options, EngineSettings};
use crate::commands::Global;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, Rules};
use crate::engine::Device;
use crate::feeds::{self, FeedOptions};
use crate::input_files;
use crate::options::EngineOption;
use crate::output_files::{claim_set, StagedSet};
use crate::report::compare::{RunSide, TwoRunReport};
use crate::report::repro::{Case, Folder, Repro};
use crate::runtime;
use crate::supervise::child::say;
use crate::supervise::command::MgeCommand;
use crate::supervise::parent::{How, Interrupted, Muted, Next, Supervisor};
use crate::text::quoted_list;

/// One of the two runs.
struct Run {
    name: &'static str,
    model: PathBuf,
    options: Vec<EngineOption>,
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
pub fn wants_runs(args: &TwoRunArgs) -> Result<bool> {
    Ok(args.a_options.is_some()
        || args.b_options.is_some()
        || args.b_naive
        || args.keep.is_some()
        || args.no_testcase
        || args.deadline.timeout.is_some()
        || args.repro.dir.is_some()
        || !args.feeds.inputs.is_empty()
        || !given_options(&args.engine)?.is_empty())
}

pub fn compare_runs(args: &CompareArgs, rules: Rules, global: &Global) -> Result<TwoRunReport> {
    let runs = &args.runs;
    let (a, b) = two_runs(args, global)?;
    // The runs read them: claimed here, so that neither --keep nor stdout takes one.
    for model in [&a.model, &b.model] {
        input_files::claim(model)?;
    }
    for file in feeds::source_files(&feeds::expand_specs(&runs.feeds.inputs)?) {
        input_files::claim(&file)?;
    }
    if let Some(dir) = &runs.keep {
        claim_set("--keep", dir).with_context(|| format!("--keep {}", dir.display()))?;
        if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
            bail!(
                "--keep {}: the folder is not empty; name a new or empty one",
                dir.display()
            );
        }
    }
    let mut repro = runs.repro.dir.as_deref().map(Repro::claim).transpose()?;
    if runs.feeds.inputs.is_empty() {
        global.note(format!(
            "no --input given: both runs are fed the same #rand values (--seed {}), or a container's testcase 0",
            runs.feeds.seed
        ));
    }
    let located = runtime::locate(global.lite_lib.as_deref())?;
    let staged = runs.keep.as_deref().map(StagedSet::new).transpose()?;
    let scratch = tempfile::Builder::new()
        .prefix("mge-compare-")
        .tempdir()
        .context("cannot create a temporary folder for the two runs")?;
    let root = staged.as_ref().map_or(scratch.path(), StagedSet::path).to_path_buf();
    let feeds = FeedOptions {
        seed: runs.feeds.seed,
        resize_input: runs.feeds.resize_input,
    };
    let mut transcripts = Vec::new();
    for run in [&a, &b] {
        global.note(format!("{}: {}", run.name, run.side().describe()));
        let folder = root.join(run.name);
        std::fs::create_dir(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
        let mut command = MgeCommand::dump_io(&run.model, &folder.join("io"), &folder.join("outputs"))
            .feeds(&runs.feeds.inputs, &feeds)
            .engine(&run.options)
            .runtime(Ok(&located))
            .verbose(global.verbose);
        if runs.no_testcase {
            command = command.no_testcase();
        }
        if run.naive {
            command = command.naive_kernels();
        }
        if let Some(repro) = &repro {
            command = command.record_for_repro(&repro.record_folder(run.name));
        }
        let ran = supervise(&command, run, runs, global.verbose)?;
        transcripts.push(format!("run {}:\n{}", run.name, ran.transcript));
        if let Some(died) = ran.died {
            if let Some(repro) = repro.take() {
                let reproducing = Reproducing {
                    args,
                    rules: &rules,
                    runs: (&a, &b),
                    located: &located,
                    global,
                };
                reproducing.write(repro, died.clone(), transcripts.concat());
            }
            bail!("{died}");
        }
    }
    let side = |run: &Run, what: &str| Side::open(&root.join(run.name).join(what));
    let mut outputs = compare_sides(&side(&a, "outputs")?, &side(&b, "outputs")?, &rules)?;
    for row in &mut outputs {
        // `NAME.npy`, as the runs wrote each output: named by the output.
        if let Some(stem) = row.name.strip_suffix(".npy") {
            row.name = stem.to_string();
        }
    }
    let vars = compare_sides(&side(&a, "io")?, &side(&b, "io")?, &rules.for_values())?;
    rules.check_names(outputs.iter().chain(&vars).map(|row| row.name.as_str()))?;
    if let (Some(staged), Some(dir)) = (staged, &runs.keep) {
        staged.commit().with_context(|| format!("--keep {}", dir.display()))?;
    }
    let differing: Vec<String> = outputs
        .iter()
        .filter(|row| row.status.failed())
        .map(|row| row.name.clone())
        .collect();
    if let (Some(repro), false) = (repro, differing.is_empty()) {
        let reproducing = Reproducing {
            args,
            rules: &rules,
            runs: (&a, &b),
            located: &located,
            global,
        };
        let failure = format!(
            "{} of {} outputs differ beyond {}: {}",
            differing.len(),
            outputs.len(),
            rules.describe(),
            quoted_list(&differing)
        );
        reproducing.write(repro, failure, transcripts.concat());
    }
    Ok(TwoRunReport::new(
        (a.side(), b.side()),
        rules,
        outputs,
        differing_sources(&vars),
        first_divergence(&vars),
        vars,
        runs.keep.as_deref(),
    ))
}

/// The two runs `args` ask for: two models, or one under two sets of options.
fn two_runs(args: &CompareArgs, global: &Global) -> Result<(Run, Run)> {
    let runs = &args.runs;
    let model_b = match &args.b {
        Some(b) => {
            if !is_model(b) {
                bail!(
                    "A is a model and B is not ({}): give two models, or two sets of tensors",
                    b.display()
                );
            }
            b.clone()
        }
        None if runs.a_options.is_none() && runs.b_options.is_none() && !runs.b_naive => bail!(
            "one model runs twice only under two configurations: add --a-options ARGS, --b-options ARGS or --b-naive (or give model B)"
        ),
        None => args.a.clone(),
    };
    let common = given_options(&runs.engine)?;
    let side = |name: &'static str, model: PathBuf, own: &Option<String>, naive: bool| -> Result<Run> {
        let own = match own {
            Some(text) => {
                let parsed = parse_engine_options(text).map_err(|err| anyhow::anyhow!("--{name}-options {err}"))?;
                given_options(&parsed)?
            }
            None => Vec::new(),
        };
        let options = merged(&common, own);
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
            naive,
        })
    };
    Ok((
        side("a", args.a.clone(), &runs.a_options, false)?,
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

/// How one side's run went: what it printed on stderr, and how it died if
/// it did (crashed, hung, exited from inside the engine).
struct Ran {
    transcript: String,
    died: Option<String>,
}

/// Runs one side's child to its end; its death, or its error, names the side.
fn supervise(command: &MgeCommand, run: &Run, runs: &TwoRunArgs, verbose: bool) -> Result<Ran> {
    let mut child = Supervisor::spawn(command, false, true)?;
    if verbose {
        child.show_engine_output();
    }
    let deadline = runs
        .deadline
        .timeout
        .map(|limit| (std::time::Instant::now() + limit, limit));
    let what = format!("run {} ({})", run.name, run.side().describe());
    loop {
        let died = match child.next(deadline, &mut Muted) {
            // The dump's own report: not ours to print.
            Next::Reply(_) => continue,
            Next::Exited(0) => None,
            Next::Exited(_) => bail!("{what}: {}", child.error().unwrap_or("it failed")),
            Next::Failed(failure) => match failure.how {
                How::Interrupted(signal) => return Err(Interrupted(signal).into()),
                _ => Some(format!("{what}: {failure}")),
            },
        };
        return Ok(Ran {
            transcript: child.transcript(),
            died,
        });
    }
}

/// What `--repro` needs of the two runs to write their folder.
struct Reproducing<'a> {
    args: &'a CompareArgs,
    rules: &'a Rules,
    runs: (&'a Run, &'a Run),
    located: &'a runtime::Located,
    global: &'a Global,
}

impl Reproducing<'_> {
    /// Writes the folder of the two runs, one of which died or whose outputs
    /// differ (`failure`), and says where; one that cannot be written is a warning.
    fn write(&self, mut repro: Repro, failure: String, transcript: String) {
        let (a, b) = self.runs;
        // The feeds of the run that got to them: both were fed the same.
        let record = [a, b]
            .map(|run| repro.record_folder(run.name))
            .into_iter()
            .find(|record| record.join("feeds").is_dir())
            .unwrap_or_else(|| repro.record_folder(a.name));
        let case = Case {
            model: &a.model,
            record: Some(record),
            failure: failure.split("\nhint: ").next().unwrap_or_default().to_string(),
            engine_log: transcript,
            runtime: Some(self.located),
            lite_lib: self.global.lite_lib.as_deref(),
        };
        let written = repro
            .add(case, |folder| self.reproducing_compare(folder))
            .and_then(|()| repro.finish());
        match written {
            Ok(lines) => lines.iter().for_each(|line| say(line)),
            Err(err) => self.global.warn(format!("{err:#}")),
        }
    }

    /// The comparison as it goes from inside the folder: the models copied
    /// (`model.mge`, or `a.mge` and `b.mge`), the recorded feeds, each side's
    /// options whole (the common ones in both).
    fn reproducing_compare(&self, folder: &mut Folder) -> Result<MgeCommand> {
        let (a, b) = self.runs;
        let runs = &self.args.runs;
        let models = match &self.args.b {
            Some(_) => vec![folder.model("a.mge", &a.model)?, folder.model("b.mge", &b.model)?],
            None => vec![folder.model("model.mge", &a.model)?],
        };
        let a_options = folder.options(Some("a"), &a.options)?;
        let b_options = folder.options(Some("b"), &b.options)?;
        let feeds = FeedOptions {
            seed: runs.feeds.seed,
            resize_input: false,
        };
        let mut command = MgeCommand::compare().feeds(folder.feeds(), &feeds);
        // One model runs twice only under two sets of options, however empty;
        // two models, each under its own.
        for (side, options) in [("a", &a_options), ("b", &b_options)] {
            if self.args.b.is_none() || !options.is_empty() {
                command = command.side_options(side, options);
            }
        }
        let mut command = command
            .b_naive(b.naive)
            .rules(Some(self.rules))
            .seconds("--timeout", runs.deadline.timeout)
            .models(&models);
        // A container the user fed runs fed, as it did, whatever the record holds.
        if runs.no_testcase || !runs.feeds.inputs.is_empty() {
            command = command.no_testcase();
        }
        Ok(command)
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
