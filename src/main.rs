// The Lite C API, the NVIDIA driver's and the libc calls around them are
// `src/engine/`'s alone: no other module may use `unsafe`.
#![deny(unsafe_code)]

mod cli;
mod commands;
mod compare;
#[allow(unsafe_code)]
mod engine;
mod exit;
mod feeds;
mod input_files;
mod interrupt;
mod iodump;
mod loading;
mod memory;
mod messages;
mod mge_command;
mod model;
mod options;
mod output_checks;
mod output_files;
mod packed_options;
mod pool;
mod profile;
mod reduce;
mod report;
mod runner;
mod runtime;
mod settings;
mod supervise;
mod tensor;
mod text;
mod tune;

use std::process::ExitCode;

use crate::engine::EngineError;
use crate::exit::{CheckFailed, ChildExited, NonFinite};
use crate::interrupt::Interrupted;
use crate::messages::say;
use crate::supervise::child::end;
use crate::supervise::parent::Failure;
use crate::supervise::Ending;
use crate::text::{printable, printable_lines};

/// The stack the tool's work gets, whatever `ulimit -s` gives the main thread.
const STACK: usize = 8 << 20;

fn main() -> ExitCode {
    // Before anything is loaded or started: the engine's libraries come from trusted folders only.
    if let Err(err) = runtime::ensure_trusted_library_path() {
        end(&Ending::Refused {
            message: error_text(&err),
        });
        return ExitCode::from(2);
    }
    engine::ignore_file_size_signal();
    engine::ensure_thread_stacks(STACK);
    supervise::child::init();
    // On a thread of its own, named as the main thread is (the name appears
    // in the engine's exits); where none can start, on the main thread.
    let work = std::thread::Builder::new().name("mge".into()).stack_size(STACK);
    match work.spawn(run).map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => code,
        // The panic was said by the hook.
        Ok(Err(_)) => ExitCode::from(101),
        Err(_) => run(),
    }
}

fn run() -> ExitCode {
    let cli = match cli::Cli::parse_with_saved_options() {
        Ok(cli) => cli,
        Err(message) => {
            end(&Ending::Refused {
                message: printable_lines(&message).into_owned(),
            });
            return ExitCode::from(2);
        }
    };
    let verbose = cli.verbose;
    match commands::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => exit_with(&err, verbose),
    }
}

/// 1 for a check that did not pass, 2 for every error; a supervised child's own code.
fn exit_with(err: &anyhow::Error, verbose: bool) -> ExitCode {
    if let Some(ChildExited(code)) = err.downcast_ref::<ChildExited>() {
        return ExitCode::from(*code);
    }
    if let Some(interrupted) = err.downcast_ref::<Interrupted>() {
        say(&format!("mge: {interrupted}"));
        return ExitCode::from(u8::try_from(128 + interrupted.0).unwrap_or(2));
    }
    let ending = ending_of(err);
    // Said first: what follows is for the user, not how the command ended.
    end(&ending);
    if let Some(engine) = err.chain().find_map(|cause| cause.downcast_ref::<EngineError>()) {
        if verbose {
            say(&format!(
                "engine call {} failed:\n{}\n\nbacktrace:\n{}",
                engine.call, engine.message, engine.backtrace
            ));
        } else {
            say("(run with -v for the engine's full message and backtrace)");
        }
    }
    ExitCode::from(ending.exit_code())
}

/// How the command that failed with `err` ended: a failed check (exit 1),
/// or an error (exit 2), the engine's where the engine returned one.
fn ending_of(err: &anyhow::Error) -> Ending {
    if let Some(NonFinite(found)) = err.downcast_ref::<NonFinite>() {
        return Ending::NonFinite {
            found: printable(found).into_owned(),
        };
    }
    if let Some(failed) = err.downcast_ref::<CheckFailed>() {
        return Ending::CheckFailed {
            message: printable(&failed.to_string()).into_owned(),
        };
    }
    let message = error_text(err);
    match err.chain().any(|cause| cause.is::<EngineError>()) {
        true => Ending::EngineRefused { message },
        false => Ending::Refused { message },
    }
}

/// The error's message on one line, and its hint (if any) on one of its
/// own: a name, a path or the engine's words in it show their hidden
/// characters escaped (see `text::printable`).
fn error_text(err: &anyhow::Error) -> String {
    let message = format!("{err:#}");
    let hint = err
        .chain()
        .find_map(|cause| cause.downcast_ref::<Failure>())
        .and_then(|failure| failure.hint);
    match hint.and_then(|hint| Some((hint, message.strip_suffix(&format!("\nhint: {hint}"))?))) {
        Some((hint, message)) => format!("{}\nhint: {hint}", printable(message)),
        None => printable(&message).into_owned(),
    }
}
