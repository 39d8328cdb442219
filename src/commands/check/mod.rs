//! `mge check`: every embedded testcase of every model, pass or fail.
//!
//! Models are checked in worker processes (`mge check --worker`, N of them
//! with `-j N`), supervised like every process that runs the engine: a worker
//! the engine takes down, or one that overruns `--timeout`, costs only the
//! model it was checking, and a new worker goes on with the rest. Processes,
//! not threads, also because the engine prints each AssertEqual error on the
//! process's stdout, which is where they are read.

mod reduced;
mod workers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

use crate::cli::{CheckArgs, EngineArgs};
use crate::compare::Rules;
use crate::engine::Device;
use crate::exit::CheckFailed;
use crate::input_files;
use crate::loading::refuse_unchecked_testcases;
use crate::mge_command::MgeCommand;
use crate::options::EngineOption;
use crate::report::check::{CheckReport, ModelCheck};
use crate::report::ci::CiReports;
use crate::report::junit;
use crate::report::made_by::Making;
use crate::report::repro::{self, FailingModel, Folder, Repro};
use crate::report::{emit, print};
use crate::runtime;
use crate::settings::models::select_models;
use crate::settings::Global;
use crate::settings::{comparison_rules, EngineSettings};
use workers::{serve, Workers};

/// What `mge check` was asked, turned once from `CheckArgs`.
pub struct CheckSettings {
    /// As given to a worker; for `check`, selected (`--shard`) and claimed.
    models: Vec<PathBuf>,
    /// As given to a worker, which the parent gave its defaults; for
    /// `check`, with check's own (`engine_settings`).
    engine: EngineSettings,
    /// The user's rules; without any, the model's own assertions judge, in the engine.
    rules: Option<Rules>,
    check_finite: bool,
    role: Role,
}

/// Whether this process checks the models and reports, or serves as a worker.
enum Role {
    /// `--worker`: checks the models a parent asks for (`workers::serve`).
    Worker,
    /// `mge check`: checks every model in workers and reports.
    Report {
        jobs: usize,
        json: bool,
        /// `--junit FILE`.
        junit: Option<PathBuf>,
        /// `--markdown FILE`, the step summary and annotations.
        ci: CiReports,
        /// Per model.
        timeout: Option<Duration>,
        /// `--repro DIR`, claimed.
        repro: Option<PathBuf>,
        /// `--require-testcases`: a plain model fails.
        require_testcases: bool,
        /// `--reduce`.
        reduce: bool,
    },
}

impl CheckSettings {
    pub fn from_args(args: CheckArgs, global: &Global) -> Result<CheckSettings> {
        let rules = comparison_rules(&args.comparison, None)?;
        let rules = (rules != Rules::default()).then_some(rules);
        let check_finite = args.finite.check_finite;
        if args.worker {
            return Ok(CheckSettings {
                engine: EngineSettings::from_args(&args.engine, global)?,
                models: args.models,
                rules,
                check_finite,
                role: Role::Worker,
            });
        }
        let models = select_models(&args.models, args.shard, global)?;
        // The workers read them: claimed here, so that no report replaces one.
        for model in &models {
            input_files::claim(model)?;
        }
        // Refused here, in one line (and noted once), rather than once per model.
        let engine = engine_settings(&args.engine, global)?;
        refuse_unchecked_testcases(&engine.network)?;
        engine.claim_files()?;
        junit::claim(args.junit.as_deref())?;
        let ci = CiReports::from_flags(args.markdown, args.json)?;
        if let Some(dir) = &args.repro.dir {
            repro::claim(dir)?;
        }
        Ok(CheckSettings {
            role: Role::Report {
                jobs: usize::try_from(args.jobs).unwrap_or(usize::MAX).min(models.len()),
                json: args.json,
                junit: args.junit,
                ci,
                timeout: args.deadline.timeout,
                repro: args.repro.dir,
                require_testcases: args.require_testcases,
                reduce: args.reduce.reduce,
            },
            models,
            engine,
            rules,
            check_finite,
        })
    }
}

pub fn check(settings: CheckSettings, global: &Global) -> Result<()> {
    let CheckSettings {
        models,
        engine,
        rules,
        check_finite,
        role,
    } = settings;
    let Role::Report {
        jobs,
        json,
        junit,
        ci,
        timeout,
        repro,
        require_testcases,
        reduce,
    } = role
    else {
        return serve(&models, &engine, rules.as_ref(), check_finite, global);
    };
    let mut printer = InOrder::new(!json);
    let located = runtime::locate(&global.runtime)?;
    // As the engine options: here, in one line, rather than once per model.
    runtime::ensure_runs_on(&located, engine.network.device)?;
    let mut repro = repro.as_deref().map(Repro::stage).transpose()?;
    let workers = Workers {
        models: &models,
        engine: &engine.given,
        rules: rules.as_ref(),
        runtime: &located,
        timeout,
        verbose: global.verbose,
        check_finite,
        require_testcases,
        record: repro.as_ref().map(|repro| repro.record_folder("check")),
    };
    let transcripts = workers.check_all(jobs, &mut printer)?;
    let checks = printer.finish();
    let anything_ran = checks.iter().any(ModelCheck::reached_the_engine);
    let suites: Vec<_> = checks.iter().map(ModelCheck::junit_suite).collect();
    junit::write(junit.as_deref(), "mge check", &suites)?;
    if let (Some(repro), Some(record)) = (repro.take(), &workers.record) {
        let reproducing = Reproducing {
            models: &models,
            engine: &engine,
            rules: rules.as_ref(),
            check_finite,
            timeout,
            runtime: &located,
            global,
            reduce,
        };
        reproducing.write(repro, record, &checks, transcripts);
    }
    let report = CheckReport::new(checks);
    print(&report, json, &Making::new(&global.runtime, None, &engine.given))?;
    ci.write("mge check", &suites)?;
    let tally = report.tally;
    // Plain models alone are nothing to run, not a failure to.
    if !anything_ran && tally.failed > 0 {
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
    models: &'a [PathBuf],
    engine: &'a EngineSettings,
    rules: Option<&'a Rules>,
    check_finite: bool,
    timeout: Option<Duration>,
    runtime: &'a runtime::Located,
    global: &'a Global,
    /// `--reduce`: each folder also holds the smallest part of the model found to fail alike.
    reduce: bool,
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
            let model = &self.models[index];
            let failing = FailingModel {
                model,
                record: Some(record.join(index.to_string())),
                failure: models[index].failure_line(),
                engine_log: transcript,
                runtime: Some(self.runtime),
                choice: &self.global.runtime,
            };
            written = repro.add(failing, |folder| {
                let command = self.reproducing_check(model, folder)?;
                if self.reduce {
                    self.reduce(&models[index], model, folder)?;
                }
                Ok(command)
            });
        }
        repro.finish(written, |warning| self.global.warn(warning));
    }

    /// The check of one model as it goes from inside its folder.
    fn reproducing_check(&self, model: &Path, folder: &mut Folder) -> Result<MgeCommand> {
        let model = folder.model("model.mge", model)?;
        let options = folder.options(None, &self.engine.given)?;
        Ok(MgeCommand::check()
            .engine(&options)
            .rules(self.rules)
            .check_finite(self.check_finite)
            .seconds("--timeout", self.timeout)
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
