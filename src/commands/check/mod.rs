//! `mge check`: every embedded testcase of every model, pass or fail.
//!
//! Models are checked in worker processes (`mge check --worker`, N of them
//! with `-j N`), supervised like every process that runs the engine: a worker
//! the engine takes down, or one that overruns `--timeout`, costs only the
//! model it was checking, and a new worker goes on with the rest. Processes,
//! not threads, also because the engine prints each AssertEqual error on the
//! process's stdout, which is where they are read.

mod models;
mod workers;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::prepare::refuse_unchecked_testcases;
use super::settings::{comparison_rules, EngineSettings};
use super::{CheckFailed, Global};
use crate::cli::{CheckArgs, EngineArgs};
use crate::compare::Rules;
use crate::engine::Device;
use crate::input_files;
use crate::options::EngineOption;
use crate::output_files::{claim_file, write_atomically};
use crate::report::check::{CheckReport, ModelCheck, Tally};
use crate::report::junit::junit_xml;
use crate::report::repro::{Case, Folder, Repro};
use crate::report::{emit, print};
use crate::runtime;
use crate::supervise::child::say;
use crate::supervise::command::MgeCommand;
use models::select_models;
use workers::{serve, Workers};

pub fn check(mut args: CheckArgs, global: &Global) -> Result<()> {
    let rules = comparison_rules(&args.comparison, None)?;
    // Without any rule, the model's own assertions judge, in the engine.
    let rules = (rules != Rules::default()).then_some(rules);
    if args.worker {
        return serve(
            &args.models,
            &args.engine,
            rules.as_ref(),
            args.finite.check_finite,
            global,
        );
    }
    args.models = select_models(&args.models, args.shard, global)?;
    // The workers read them: claimed here, so that no report replaces one.
    for model in &args.models {
        input_files::claim(model)?;
    }
    // Refused here, in one line (and noted once), rather than once per model.
    let engine = engine_settings(&args.engine, global)?;
    refuse_unchecked_testcases(&engine.network)?;
    engine.claim_files()?;
    if let Some(junit) = &args.junit {
        claim_file("--junit", junit).with_context(|| format!("--junit {}", junit.display()))?;
    }
    let mut repro = args.repro.dir.as_deref().map(Repro::claim).transpose()?;
    let mut printer = InOrder::new(!args.json);
    let jobs = usize::try_from(args.jobs).unwrap_or(usize::MAX).min(args.models.len());
    let located = runtime::locate(global.lite_lib.as_deref())?;
    let workers = Workers {
        models: &args.models,
        engine: &engine.given,
        rules: rules.as_ref(),
        runtime: &located,
        timeout: args.deadline.timeout,
        verbose: global.verbose,
        check_finite: args.finite.check_finite,
        record: repro.as_ref().map(|repro| repro.record_folder("check")),
    };
    let transcripts = workers.check_all(jobs, &mut printer)?;
    let models = printer.finish();
    let tally = Tally::of_models(&models);
    let anything_ran = models.iter().any(ModelCheck::reached_the_engine);
    if let Some(junit) = &args.junit {
        write_atomically(junit, junit_xml(&models).as_bytes()).context("--junit")?;
    }
    if let (Some(repro), Some(record)) = (repro.take(), &workers.record) {
        let reproducing = Reproducing {
            engine: &engine,
            rules: rules.as_ref(),
            args: &args,
            runtime: &located,
            global,
        };
        reproducing.write(repro, record, &models, transcripts);
    }
    print(&CheckReport { models, tally }, args.json)?;
    if !anything_ran && !args.models.is_empty() {
        bail!("no testcase could run");
    }
    if tally.failed > 0 {
        return Err(CheckFailed(tally.to_string()).into());
    }
    Ok(())
}

/// The user's engine options with check's own default: kernels on the calling
/// thread. The engine's CPU dispatcher thread spins while it waits, and two
/// workers' spinning threads starve each other.
fn engine_settings(args: &EngineArgs, global: &Global) -> Result<EngineSettings> {
    let settings = EngineSettings::from_args(args, global)?;
    settings.warn_oversubscribed(global);
    let placed = settings
        .given
        .iter()
        .any(|option| option.clashes_with(&EngineOption::CpuInplace));
    Ok(match placed || settings.network.device != Device::Cpu {
        true => settings,
        false => settings.with(EngineOption::CpuInplace),
    })
}

/// What `--repro` needs of a check to write the folders of its failed models.
struct Reproducing<'a> {
    engine: &'a EngineSettings,
    rules: Option<&'a Rules>,
    args: &'a CheckArgs,
    runtime: &'a runtime::Located,
    global: &'a Global,
}

impl Reproducing<'_> {
    /// Writes a folder for each model whose worker printed `transcripts` (those
    /// `ModelCheck::failed_in_the_run`), from what the workers recorded under
    /// `record`, and says where; a folder that cannot be written is a warning.
    fn write(&self, mut repro: Repro, record: &Path, models: &[ModelCheck], transcripts: Vec<Option<String>>) {
        let mut written = Ok(());
        for (index, transcript) in transcripts.into_iter().enumerate() {
            let (Some(transcript), Ok(())) = (transcript, &written) else {
                continue;
            };
            let model = &self.args.models[index];
            let case = Case {
                model,
                record: Some(record.join(index.to_string())),
                failure: models[index].failure_line(),
                engine_log: transcript,
                runtime: Some(self.runtime),
                lite_lib: self.global.lite_lib.as_deref(),
            };
            written = repro.add(case, |folder| self.reproducing_check(model, folder));
        }
        match written.and_then(|()| repro.finish()) {
            Ok(lines) => lines.iter().for_each(|line| say(line)),
            Err(err) => self.global.warn(format!("{err:#}")),
        }
    }

    /// The check of one model as it goes from inside its folder.
    fn reproducing_check(&self, model: &Path, folder: &mut Folder) -> Result<MgeCommand> {
        let model = folder.model("model.mge", model)?;
        let options = folder.options(None, &self.engine.given)?;
        Ok(MgeCommand::check()
            .engine(&options)
            .rules(self.rules)
            .check_finite(self.args.finite.check_finite)
            .seconds("--timeout", self.args.deadline.timeout)
            .models(&[model]))
    }
}

/// Results arrive in any order; lines are printed in the order models were given.
pub(super) struct InOrder {
    print: bool,
    next: usize,
    pending: BTreeMap<usize, ModelCheck>,
    done: Vec<ModelCheck>,
}

impl InOrder {
    fn new(print: bool) -> InOrder {
        InOrder {
            print,
            next: 0,
            pending: BTreeMap::new(),
            done: Vec::new(),
        }
    }

    pub fn add(&mut self, index: usize, check: ModelCheck) -> Result<()> {
        self.pending.insert(index, check);
        while let Some(check) = self.pending.remove(&self.next) {
            if self.print {
                emit(&check.to_text())?;
            }
            self.done.push(check);
            self.next += 1;
        }
        Ok(())
    }

    fn finish(self) -> Vec<ModelCheck> {
        self.done
    }
}
