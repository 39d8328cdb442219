//! One file per subcommand; `dispatch` hands each its plain options.

mod check;
mod compare;
mod completions;
mod dump;
mod finite;
mod info;
mod man;
mod pack_testcases;
mod prepare;
mod profile;
mod run;
mod runtime;
mod settings;
mod tune;

use std::fmt;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{Cli, Command, RuntimeCommand};
use crate::report::progress::RunProgress;
use crate::runtime as lite_runtime;
use crate::supervise;
use crate::supervise::parent::Work;
use crate::text::printable;

/// Options every command may need.
pub struct Global {
    /// The runtime asked for (`--lite-lib`, `--runtime-version`).
    pub runtime: crate::runtime::Choice,
    pub verbose: bool,
    pub quiet: bool,
}

impl Global {
    /// A note for the user on stderr, unless `--quiet`.
    pub fn note(&self, message: impl fmt::Display) {
        if !self.quiet {
            supervise::child::say(&format!("note: {}", printable(&message.to_string())));
        }
    }

    /// A warning on stderr, even with `--quiet`: something may not be what the user thinks.
    pub fn warn(&self, message: impl fmt::Display) {
        supervise::child::say(&format!("warning: {}", printable(&message.to_string())));
    }
}

/// A check ran and did not pass: exit code 1, not an error.
#[derive(Debug)]
pub struct CheckFailed(pub String);

impl fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckFailed {}

/// The supervised child ended with this exit code, having said all there was to say.
#[derive(Debug)]
pub struct ChildExited(pub u8);

impl fmt::Display for ChildExited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the engine's process exited with code {}", self.0)
    }
}

impl std::error::Error for ChildExited {}

pub fn dispatch(cli: Cli) -> Result<()> {
    let global = Global {
        runtime: crate::runtime::Choice {
            lite_lib: cli.lite_lib,
            version: cli.runtime_version,
        },
        verbose: cli.verbose,
        quiet: cli.quiet,
    };
    let supervisor = !supervise::is_child();
    match cli.command {
        Command::Run(args) if supervisor => supervised(args.deadline.timeout, Work::Model, &global),
        // An analysis of a file runs no engine.
        Command::Profile(args) if supervisor && args.analyze.is_none() => {
            supervised(args.deadline.timeout, Work::Model, &global)
        }
        // A conversion runs no engine.
        Command::Dump(args) if supervisor && args.convert.is_none() => {
            let work = match args.layout_transform_model {
                Some(_) => Work::LayoutTransformModel,
                None => Work::Model,
            };
            supervised(args.deadline.timeout, work, &global)
        }
        Command::PackTestcases(args) if supervisor => supervised(args.deadline.timeout, Work::Model, &global),
        // Info loads the model into the engine to read its inputs, which a broken graph can crash.
        Command::Info(_) if supervisor => supervised(None, Work::Model, &global),
        Command::Run(args) => run::run(*args, &global),
        Command::Info(args) => info::info(args, &global),
        Command::Check(args) => check::check(*args, &global),
        Command::Profile(args) => profile::profile(*args, &global),
        Command::Dump(args) => dump::dump(*args, &global),
        Command::Compare(args) => compare::compare(*args, &global),
        Command::Tune(args) => tune::tune(*args, &global),
        Command::PackTestcases(args) => pack_testcases::pack(*args, &global),
        Command::Runtime(RuntimeCommand::Install {
            version,
            wheel,
            find_links,
            force,
        }) => runtime::install(version.as_deref(), wheel, find_links, force, &global),
        Command::Runtime(RuntimeCommand::Info { json }) => runtime::info(json, &global),
        Command::Completions { shell } => completions::completions(shell),
        Command::Man { dir } => man::man(&dir),
    }
}

/// Runs this command again in a child process that does the engine's work with
/// the runtime located here, drawing its progress here and turning its death
/// into an error. Where none was found, the child says so after its own checks
/// of the command line, as when it looked itself.
fn supervised(timeout: Option<Duration>, work: Work, global: &Global) -> Result<()> {
    let lookup = lite_runtime::locate(&global.runtime);
    let mut progress = RunProgress::new(global.quiet);
    match supervise::parent::rerun_supervised(lookup.as_ref(), timeout, global.verbose, work, &mut progress)? {
        0 => Ok(()),
        code => Err(ChildExited(u8::try_from(code).unwrap_or(2)).into()),
    }
}
