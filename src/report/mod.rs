//! Presentation: tables, progress and files written for people and machines.

pub mod check;
pub mod compare;
pub mod file;
pub mod junit;
pub mod profile;
pub mod progress;
pub mod run;
pub mod table;
pub mod trace;
pub mod tune;

use std::io::{ErrorKind, Write};

use anyhow::{Context, Result};
use serde::Serialize;

/// Names for a message: `'a', 'b', 'c'`.
pub fn quoted_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|name| format!("'{}'", name.as_ref())).collect();
    quoted.join(", ")
}

/// Writes a command's result to stdout. A reader that went away (`| head`) is
/// not an error.
pub fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(err) if err.kind() == ErrorKind::BrokenPipe => Ok(()),
        result => result.context("cannot write to stdout"),
    }
}

/// One JSON document on stdout.
pub fn emit_json(value: &impl Serialize) -> Result<()> {
    emit(&(serde_json::to_string_pretty(value)? + "\n"))
}
