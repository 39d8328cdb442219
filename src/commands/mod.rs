//! One file per subcommand; `dispatch` hands each its plain options.

mod check;
mod child_run;
mod compare;
mod completions;
mod dump;
mod expect;
mod fast_run;
mod finite;
mod info;
mod man;
mod models;
mod pack_testcases;
mod pool;
mod prepare;
mod profile;
mod reduce;
mod run;
mod runtime;
mod settings;
mod tune;

use std::fmt;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{Cli, Command, DeadlineArgs, RuntimeCommand};
use crate::messages;
use crate::report::progress::RunProgress;
use crate::runtime as lite_runtime;
use crate::supervise;
use crate::supervise::parent::Work;

/// Options every command may need.
pub struct Global {
    /// The runtime asked for (`--lite-lib`, `--runtime-version`).
    pub runtime: crate::runtime::Choice,
    pub verbose: bool,
    pub quiet: bool,
    /// Neither notes nor warnings: the parent of a supervised run turning
    /// the settings its child turns too, and speaks of.
    pub mute: bool,
}

impl Global {
    /// A note for the user on stderr, unless `--quiet`.
    pub fn note(&self, message: impl fmt::Display) {
        if !self.quiet && !self.mute {
            messages::note(message);
        }
    }

    /// A warning on stderr, even with `--quiet`: something may not be what the user thinks.
    pub fn warn(&self, message: impl fmt::Display) {
        if self.mute {
            return;
        }
        messages::warning(message);
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
        mute: false,
    };
    if let Some(supervision) = Supervision::of(&cli.command).filter(|_| !supervise::is_child()) {
        let reproducer = match cli.command {
            Command::Run(args) if supervision.reproduces => {
                let mute = Global {
                    runtime: global.runtime.clone(),
                    mute: true,
                    ..global
                };
                run::Reproducer::stage(run::RunSettings::from_args(*args, &mute)?, supervision.timeout)?
            }
            _ => None,
        };
        return supervised(supervision.timeout, supervision.work, reproducer, &global);
    }
    match cli.command {
        Command::Run(args) => run::run(run::RunSettings::from_args(*args, &global)?, &global),
        Command::Info(args) => info::info(info::InfoSettings::from_args(args, &global)?, &global),
        Command::Check(args) => check::check(check::CheckSettings::from_args(*args, &global)?, &global),
        Command::Profile(args) => profile::profile(profile::ProfileSettings::from_args(*args, &global)?, &global),
        Command::Dump(args) => dump::dump(dump::DumpSettings::from_args(*args, &global)?, &global),
        Command::Compare(args) => compare::compare(compare::CompareSettings::from_args(*args, &global)?, &global),
        Command::Tune(args) => tune::tune(tune::TuneSettings::from_args(*args, &global)?, &global),
        Command::PackTestcases(args) => pack_testcases::pack_testcases(
            pack_testcases::PackTestcasesSettings::from_args(*args, &global)?,
            &global,
        ),
        Command::Runtime(RuntimeCommand::Install {
            version,
            wheel,
            from_python,
            find_links,
            force,
        }) => runtime::install(
            version.as_deref(),
            runtime::install_source(wheel, from_python, find_links)?,
            force,
            &global,
        ),
        Command::Runtime(RuntimeCommand::Info { probe: true, .. }) => runtime::serve_probe(&global),
        Command::Runtime(RuntimeCommand::Info { json, .. }) => runtime::info(json, &global),
        Command::Completions { shell } => completions::completions(shell),
        Command::Man { dir } => man::man(&dir),
    }
}

/// What the parent of a command whose engine work runs in a supervised child
/// (step 2 of the flow in ARCHITECTURE.md) needs of its arguments; the child
/// turns them into the command's settings.
struct Supervision {
    timeout: Option<Duration>,
    work: Work,
    /// `run --repro`: the parent turns the run's settings too, and writes the folder.
    reproduces: bool,
}

impl Supervision {
    /// `None` for a command that runs no engine, or starts children of its
    /// own (`check`'s workers, `compare`'s runs, `tune`'s trials, a sweep's shapes).
    fn of(command: &Command) -> Option<Supervision> {
        let model = |deadline: &DeadlineArgs| Supervision {
            timeout: deadline.timeout,
            work: Work::Model,
            reproduces: false,
        };
        match command {
            // A sweep runs each shape in a child of its own.
            Command::Run(args) if !args.sweep.is_empty() => None,
            Command::Run(args) => Some(Supervision {
                reproduces: args.repro.dir.is_some(),
                ..model(&args.deadline)
            }),
            // An analysis of a file runs no engine.
            Command::Profile(args) if args.analyze.is_none() => Some(model(&args.deadline)),
            // A conversion runs no engine.
            Command::Dump(args) if args.convert.is_none() => {
                let work = match args.layout_transform_model {
                    Some(_) => Work::LayoutTransformModel,
                    None => Work::Model,
                };
                Some(Supervision {
                    work,
                    ..model(&args.deadline)
                })
            }
            Command::PackTestcases(args) => Some(model(&args.deadline)),
            // Info loads the model into the engine to read its inputs, which a broken graph can crash.
            Command::Info(_) => Some(Supervision {
                timeout: None,
                work: Work::Model,
                reproduces: false,
            }),
            _ => None,
        }
    }
}

/// Runs this command again in a child process that does the engine's work with
/// the runtime located here, drawing its progress here and turning its death
/// into an error. Where none was found, the child says so after its own checks
/// of the command line, as when it looked itself. A `reproducer` (`run
/// --repro`) has the child record its feeds, and writes its folder should the child fail.
fn supervised(
    timeout: Option<Duration>,
    work: Work,
    reproducer: Option<run::Reproducer>,
    global: &Global,
) -> Result<()> {
    let lookup = lite_runtime::locate(&global.runtime);
    let mut progress = RunProgress::new(global.quiet);
    let record = reproducer.as_ref().map(run::Reproducer::record_folder);
    let rerun = supervise::parent::rerun_supervised(
        lookup.as_ref(),
        record.as_deref(),
        timeout,
        global.verbose,
        work,
        &mut progress,
    )?;
    drop(progress);
    if let Some(reproducer) = reproducer {
        reproducer.write(&rerun, lookup.as_ref().ok(), global);
    }
    match rerun.ended {
        Ok(0) => Ok(()),
        Ok(code) => Err(ChildExited(u8::try_from(code).unwrap_or(2)).into()),
        Err(failure) => Err(failure.into()),
    }
}
