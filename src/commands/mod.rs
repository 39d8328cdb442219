//! One file per subcommand; `dispatch` hands each its plain options.

mod check;
mod compare;
mod completions;
mod dump;
mod info;
mod man;
mod pack_testcases;
mod profile;
mod run;
mod runtime;
mod tune;

use std::time::Duration;

use anyhow::Result;

use crate::cli::{Cli, Command, DeadlineArgs, RuntimeCommand};
use crate::exit::ChildExited;
use crate::mge_command::MgeCommand;
use crate::report::progress::RunProgress;
use crate::runtime as lite_runtime;
use crate::settings::Global;
use crate::supervise;
use crate::supervise::child_run::{deadline_after, run_child, Watch};
use crate::supervise::parent::{ChildStdout, Outcome, Work};

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
    // The child loads the runtime located here, or says why there is none.
    let mut command = MgeCommand::this_process().runtime(lookup.as_ref());
    if let Some(reproducer) = &reproducer {
        command = command.record_for_repro(&reproducer.record_folder());
    }
    let watch = Watch {
        stdout: ChildStdout::Ours,
        deadline: deadline_after(timeout),
        verbose: global.verbose,
        work,
        watcher: Some(&mut progress),
    };
    let ran = run_child(&command, watch)?;
    drop(progress);
    if let Some(reproducer) = reproducer {
        reproducer.write(&ran, lookup.as_ref().ok(), global);
    }
    match ran.outcome {
        Outcome::Ran => Ok(()),
        // It said all there was to say.
        Outcome::Ended(ending) => Err(ChildExited(ending.exit_code()).into()),
        Outcome::Crashed(failure) | Outcome::Hung(failure) => Err(failure.into()),
    }
}
