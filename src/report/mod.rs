//! Presentation: tables, progress and files written for people and machines.

pub mod check;
pub mod compare;
pub mod dump;
pub mod info;
pub mod junit;
pub mod pack;
pub mod profile;
pub mod progress;
pub mod run;
pub mod runtime;
pub mod table;
pub mod trace;
pub mod tune;

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::text::printable_lines;

/// Whether stdout was closed when the tool started. Rust's runtime puts
/// /dev/null, opened read-write, in place of a closed standard stream, so the
/// report would vanish without an error; a shell's `>/dev/null` opens it
/// write-only. Asked when there is something to write, not at start-up.
fn stdout_was_closed() -> bool {
    static CLOSED: OnceLock<bool> = OnceLock::new();
    *CLOSED.get_or_init(|| {
        let on_null = fs::read_link("/proc/self/fd/1").is_ok_and(|target| target == Path::new("/dev/null"));
        let read_write = || {
            fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| {
                info.lines()
                    .find_map(|line| line.strip_prefix("flags:"))
                    .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
                    .is_some_and(|flags| flags & 0o3 == 0o2)
            })
        };
        on_null && read_write()
    })
}

/// Writes a command's result to stdout. A reader that went away (`| head`) is
/// not an error; any other failure is.
pub fn emit(text: &str) -> Result<()> {
    if stdout_was_closed() {
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

/// Prints `report` on stdout: as one JSON document when `json`, else as
/// text, in which no character of a name, a path or a message can drive the
/// terminal (each report shows line breaks of its own escaped where they
/// could forge a line).
pub fn print(report: &impl Report, json: bool) -> Result<()> {
    match json {
        true => emit(&(serde_json::to_string_pretty(report)? + "\n")),
        false => emit(&printable_lines(&report.to_text())),
    }
}
