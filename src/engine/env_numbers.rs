//! The engine's environment variables that hold numbers, which it reads with
//! C++'s `std::stoi`, `std::stol`, `std::stod`...: those throw on a value they
//! cannot read, which ends the process (SIGABRT, when the engine reads it as
//! its library loads: `MGB_CONV_PROFILING_TIMEOUT`) or fails the load with
//! the conversion's name alone ("stoi"). Each is checked before the engine
//! loads, as those functions read it (`strtol`, `strtod` and the range
//! checks around them), and refused in one line that names it.

use std::ffi::{c_char, CString};
use std::os::unix::ffi::OsStrExt;

use anyhow::{bail, Result};

use crate::text::printable;

/// How the engine reads a variable.
#[derive(Clone, Copy)]
enum Reads {
    /// `std::stoi`: a whole number within a C `int`.
    Int,
    /// `std::stol`: within a `long`.
    Long,
    /// `std::stod` and `std::stold`: a number, not out of range.
    Float,
    /// `b:` and `std::stoull` (MegEngine's CUDA memory reserve); anything else is no number.
    BytesAfterB,
}

/// The engine's numeric variables (MegEngine 1.13's sources), how it reads
/// each, and what to set it to.
const NUMBERS: [(&str, Reads, &str); 11] = [
    (
        "RUNTIME_OVERRIDE_LOG_LEVEL",
        Reads::Int,
        "0 (the engine's debug log) or another int",
    ),
    ("MGB_CONV_PROFILING_TIMEOUT", Reads::Float, "a number of seconds"),
    ("MGB_LOG_VAR_SIZE_MB", Reads::Float, "a number of megabytes"),
    ("MGB_WORKER_MAX_SPIN", Reads::Int, "a whole number of spins"),
    ("MGB_USE_MEGDNN_DBG", Reads::Long, "0, 1 or 2 (MegDNN's naive kernels)"),
    ("MGB_SUBLINEAR_MEMORY_THRESH_NR_TRY", Reads::Int, "a whole number"),
    ("MGB_SUBLINEAR_MEMORY_GENETIC_NR_ITER", Reads::Int, "a whole number"),
    ("MGB_SUBLINEAR_MEMORY_GENETIC_POOL_SIZE", Reads::Int, "a whole number"),
    (
        "MGB_SUBLINEAR_MEMORY_LOWER_BOUND_MB",
        Reads::Int,
        "a whole number of megabytes",
    ),
    ("MGB_SUBLINEAR_MEMORY_WORKERS", Reads::Int, "a whole number of workers"),
    (
        "MGB_CUDA_RESERVE_MEMORY",
        Reads::BytesAfterB,
        "b:BYTES, or anything not starting with b:",
    ),
];

/// An error line, before the engine loads, for the first of its numeric
/// variables that holds what the engine cannot read.
pub fn ensure_variables_readable() -> Result<()> {
    for (name, reads, advice) in NUMBERS {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        if !reads.reads(value.as_bytes()) {
            bail!(
                "{name}={} is not a number the engine reads, and it fails on it: set it to {advice}, or unset it",
                printable(&value.to_string_lossy())
            );
        }
    }
    Ok(())
}

impl Reads {
    /// Whether the engine's conversion takes `text`: leading white space, a
    /// number (what follows it is ignored), in range.
    fn reads(self, text: &[u8]) -> bool {
        let text = match (self, text.strip_prefix(b"b:")) {
            (Reads::BytesAfterB, Some(bytes)) => bytes,
            (Reads::BytesAfterB, None) => return true,
            _ => text,
        };
        // A variable's value holds no NUL.
        let Ok(text) = CString::new(text) else {
            return false;
        };
        let start = text.as_ptr();
        let mut end: *mut c_char = std::ptr::null_mut();
        // SAFETY: `text` is NUL-terminated and outlives the calls; `end` is
        // where they write how far they read; errno is this thread's.
        let (in_range, errno) = unsafe {
            *libc::__errno_location() = 0;
            let in_range = match self {
                Reads::Int => i32::try_from(libc::strtol(start, &mut end, 10)).is_ok(),
                Reads::Long => {
                    libc::strtol(start, &mut end, 10);
                    true
                }
                Reads::Float => {
                    libc::strtod(start, &mut end);
                    true
                }
                Reads::BytesAfterB => {
                    libc::strtoull(start, &mut end, 10);
                    true
                }
            };
            (in_range, *libc::__errno_location())
        };
        end.cast_const() != start && errno != libc::ERANGE && in_range
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As libstdc++'s `std::stoi`, `std::stol`, `std::stod` and `std::stoull` read them.
    #[test]
    fn reads_as_the_engines_conversions_do() {
        for text in ["4", " +4", "4abc", "2147483647", "-2147483648", "\t-0"] {
            assert!(Reads::Int.reads(text.as_bytes()), "{text:?}");
        }
        for text in ["", "abc", " ", "-", "2147483648", "-2147483649", "99999999999999999999"] {
            assert!(!Reads::Int.reads(text.as_bytes()), "{text:?}");
        }
        assert!(Reads::Long.reads(b"2147483648") && !Reads::Long.reads(b"99999999999999999999"));
        for text in ["1.5", " 2", "1e3s", "inf", "nan", "0x1p3", ".5"] {
            assert!(Reads::Float.reads(text.as_bytes()), "{text:?}");
        }
        for text in ["abc", "", "1e999", "-1e999", "e5"] {
            assert!(!Reads::Float.reads(text.as_bytes()), "{text:?}");
        }
        for text in ["b:1024", "0.5", "abc", ""] {
            assert!(Reads::BytesAfterB.reads(text.as_bytes()), "{text:?}");
        }
        assert!(!Reads::BytesAfterB.reads(b"b:x") && !Reads::BytesAfterB.reads(b"b:"));
    }
}
