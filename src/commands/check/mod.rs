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
use crate::report::{emit, print};
use crate::runtime;
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
    let mut printer = InOrder::new(!args.json);
    let jobs = usize::try_from(args.jobs).unwrap_or(usize::MAX).min(args.models.len());
    let located = runtime::locate(&global.runtime)?;
    // As the engine options: here, in one line, rather than once per model.
    runtime::ensure_runs_on(&located, engine.network.device)?;
    let workers = Workers {
        models: &args.models,
        engine: &engine.given,
        rules: rules.as_ref(),
        runtime: &located,
        timeout: args.deadline.timeout,
        verbose: global.verbose,
        check_finite: args.finite.check_finite,
    };
    workers.check_all(jobs, &mut printer)?;
    let models = printer.finish();
    let tally = Tally::of_models(&models);
    let anything_ran = models.iter().any(ModelCheck::reached_the_engine);
    if let Some(junit) = &args.junit {
        write_atomically(junit, junit_xml(&models).as_bytes()).context("--junit")?;
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
