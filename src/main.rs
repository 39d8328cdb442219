mod cli;
mod commands;
mod compare;
mod engine;
mod feeds;
mod model;
mod profile;
mod report;
mod runner;
mod runtime;
mod tensor;

use std::process::ExitCode;

use clap::Parser;

use crate::commands::CheckFailed;
use crate::engine::EngineError;

fn main() -> ExitCode {
    report::note_closed_stdout();
    let cli = cli::Cli::parse();
    let verbose = cli.verbose;
    match commands::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => exit_with(&err, verbose),
    }
}

/// 1 for a check that did not pass, 2 for every error.
fn exit_with(err: &anyhow::Error, verbose: bool) -> ExitCode {
    if let Some(failed) = err.downcast_ref::<CheckFailed>() {
        eprintln!("mge: check failed: {failed}");
        return ExitCode::from(1);
    }
    eprintln!("mge: error: {err:#}");
    if let Some(engine) = err.chain().find_map(|cause| cause.downcast_ref::<EngineError>()) {
        if verbose {
            eprintln!(
                "engine call {} failed:\n{}\n\nbacktrace:\n{}",
                engine.call, engine.message, engine.backtrace
            );
        } else {
            eprintln!("(run with -v for the engine's full message and backtrace)");
        }
    }
    ExitCode::from(2)
}
