//! The tool's own words for the user, on stderr: its notes, its warnings, the
//! steps of a long task, the error it ends with. Every layer that speaks
//! speaks through here. A supervised child's words go to its parent instead,
//! over their channel (`supervise::child` opens the way, `to_parent`), so that
//! the parent tells them from what the engine prints.

use std::fmt;
use std::sync::OnceLock;

use crate::text::printable;

/// How a supervised child sends its words to its parent.
static TO_PARENT: OnceLock<fn(&str)> = OnceLock::new();

/// From now on, this process's words go to its parent (once its channel is
/// open) by `said`; the way its command ends goes by `supervise::child::end`.
pub fn to_parent(said: fn(&str)) {
    let _ = TO_PARENT.set(said);
}

/// Writes `line` on stderr. A stderr that is gone (`2>&-`, a reader that
/// quit) loses it and ends nothing: the command still ends with its own code.
/// The line and its newline go in one write: stderr is unbuffered, and
/// `writeln!` writes them apart, so that a report on stdout sharing the pipe
/// could land between them.
pub fn to_stderr(line: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_all(format!("{line}\n").as_bytes());
}

/// The tool's own words for the user on stderr, or to the parent of a
/// supervised child. A stderr that is gone (a closed pipe) loses them, and
/// nothing else.
pub fn say(text: &str) {
    match TO_PARENT.get() {
        Some(said) => said(text),
        None => to_stderr(text),
    }
}

/// A note: something the user may like to know.
pub fn note(message: impl fmt::Display) {
    say(&format!("note: {}", printable(&message.to_string())));
}

/// A warning: something may not be what the user thinks.
pub fn warning(message: impl fmt::Display) {
    say(&warning_line(message));
}

/// How a warning reads, for a line said later.
pub fn warning_line(message: impl fmt::Display) -> String {
    format!("warning: {}", printable(&message.to_string()))
}

/// The steps of a long task (`runtime install`), said unless the user asked
/// for quiet (`--quiet`).
#[derive(Clone, Copy)]
pub struct Voice {
    quiet: bool,
}

impl Voice {
    pub fn new(quiet: bool) -> Voice {
        Voice { quiet }
    }

    pub fn is_quiet(self) -> bool {
        self.quiet
    }

    pub fn say(self, text: impl fmt::Display) {
        if !self.quiet {
            say(&text.to_string());
        }
    }
}
