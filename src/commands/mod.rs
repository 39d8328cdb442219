//! One file per subcommand; `dispatch` hands each its plain options.

mod check;
mod completions;
mod info;
mod man;
mod models;
mod options;
mod profile;
mod run;
mod runtime;

use std::fmt;
use std::path::PathBuf;

use anyhow::Result;

use crate::cli::{Cli, Command, RuntimeCommand};

/// Options every command may need.
pub struct Global {
    pub lite_lib: Option<PathBuf>,
    pub verbose: bool,
    pub quiet: bool,
}

impl Global {
    /// A note for the user on stderr, unless `--quiet`.
    pub fn note(&self, message: impl fmt::Display) {
        if !self.quiet {
            eprintln!("note: {message}");
        }
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

pub fn dispatch(cli: Cli) -> Result<()> {
    let global = Global {
        lite_lib: cli.lite_lib,
        verbose: cli.verbose,
        quiet: cli.quiet,
    };
    match cli.command {
        Command::Run(args) => run::run(*args, &global),
        Command::Info(args) => info::info(args, &global),
        Command::Check(args) => check::check(args, &global),
        Command::Profile(args) => profile::profile(*args, &global),
        Command::Runtime(RuntimeCommand::Install { version, force }) => runtime::install(&version, force, &global),
        Command::Runtime(RuntimeCommand::Info { json }) => runtime::info(json, &global),
        Command::Completions { shell } => completions::completions(shell),
        Command::Man { dir } => man::man(&dir),
    }
}
