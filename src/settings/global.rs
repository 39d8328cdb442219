//! The options every command may need, and the notes and warnings they govern.

use std::fmt;

use crate::messages;

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
