//! How a command ends other than with success or an error: a failed check
//! (exit 1), or the exit code of the supervised child that did its work.

use std::fmt;

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

/// How the failure `--check-finite` makes ends, which tells the user it from other checks'.
const FINITE_CHECK: &str = "(--check-finite)";

/// Outputs held NaN or infinities under `--check-finite`: exit code 1, a
/// failed check of its own kind (what was found).
#[derive(Debug)]
pub struct NonFinite(pub String);

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {FINITE_CHECK}", self.0)
    }
}

impl std::error::Error for NonFinite {}
