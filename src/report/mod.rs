//! Presentation: tables, progress and files written for people and machines,
//! and what such files hold beside their figures: how a report was made
//! (`made_by`: the tool, the runtime, the options, the CPU) and the reproducer
//! folders of `--repro` (`repro`), which share it.

pub mod bmf;
pub mod by_op;
pub mod check;
pub mod ci;
pub mod compare;
pub mod dump;
pub mod info;
pub mod junit;
pub mod made_by;
pub mod pack_testcases;
pub mod profile;
pub mod progress;
pub mod repro;
pub mod run;
pub mod runtime;
pub mod structure;
pub mod sweep;
pub mod table;
pub mod trace;
pub mod tune;

use std::io::{ErrorKind, Write};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::engine;
use crate::text::printable_lines;
use made_by::{MadeBy, Making};

/// Writes a command's result to stdout. A reader that went away (`| head`) is
/// not an error; any other failure is.
pub fn emit(text: &str) -> Result<()> {
    if engine::stdout_closed() {
        bail!("cannot write the result: stdout is closed");
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(err) if err.kind() == ErrorKind::BrokenPipe => Ok(()),
        result => result.context("cannot write to stdout"),
    }
}

/// What a command found: text for people, or with `--json` one document for machines.
pub trait Report: Serialize {
    fn to_text(&self) -> String;
}

/// Prints `report` on stdout: as one JSON document when `json`, which says
/// how it was made (`made_by`, from `making`), else as text, in which no
/// character of a name, a path or a message can drive the terminal (each
/// report shows line breaks of its own escaped where they could forge a line).
pub fn print<R: Report>(report: &R, json: bool, making: &Making) -> Result<()> {
    /// The report's fields, then `made_by`.
    #[derive(Serialize)]
    struct Made<'r, R> {
        #[serde(flatten)]
        report: &'r R,
        made_by: MadeBy,
    }
    match json {
        true => {
            let made = Made {
                report,
                made_by: making.describe()?,
            };
            emit(&(serde_json::to_string_pretty(&made)? + "\n"))
        }
        false => emit(&printable_lines(&report.to_text())),
    }
}
