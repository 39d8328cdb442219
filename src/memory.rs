//! Memory the tool takes for what a file or an argument sizes (a model, a
//! feed at a shape, a decrypted graph) is asked for fallibly: too much is one
//! line of error, never an abort, which a supervising parent would take for
//! the engine's crash and which would leave the tool's temporary folders behind.

use std::fmt;

use anyhow::Result;

/// Makes room in `vec` for exactly `additional` more elements, or says that
/// `what` does not fit in memory.
pub fn reserve<T>(vec: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    vec.try_reserve_exact(additional).map_err(|_| {
        OutOfMemory {
            what: what.to_string(),
            bytes: additional.saturating_mul(size_of::<T>()),
        }
        .into()
    })
}

/// An empty vector with room for exactly `len` elements (see `reserve`).
pub fn with_capacity<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut vec = Vec::new();
    reserve(&mut vec, len, what)?;
    Ok(vec)
}

/// `bytes` for `what` that could not be had: no fault of the file that asked.
#[derive(Debug)]
pub struct OutOfMemory {
    what: String,
    bytes: usize,
}

impl OutOfMemory {
    /// Whether `err` is, or was caused by, memory that could not be had.
    pub fn caused(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| cause.is::<OutOfMemory>())
    }
}

impl fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = match limited("Max address space") {
            true => " under the address space limit (ulimit -v)",
            false => "",
        };
        write!(
            f,
            "not enough memory for {}: {} bytes could not be allocated{limit}",
            self.what, self.bytes
        )
    }
}

impl std::error::Error for OutOfMemory {}

/// Whether this process (and so a child it starts) runs under a soft limit
/// of this name in `/proc/self/limits` ("Max address space", ...).
pub fn limited(name: &str) -> bool {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    limits.lines().any(|line| {
        line.strip_prefix(name)
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|soft| soft != "unlimited")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More than any address space holds is an error naming what and how much.
    #[test]
    fn too_much_is_an_error_not_an_abort() {
        let mut bytes = vec![1u8];
        let err = reserve(&mut bytes, usize::MAX / 2, "the model")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("not enough memory for the model: {} bytes", usize::MAX / 2)),
            "{err}"
        );
        assert_eq!(bytes, [1]);
        let err = reserve(&mut bytes, usize::MAX / 2, "x").unwrap_err().context("reading");
        assert!(OutOfMemory::caused(&err) && !OutOfMemory::caused(&anyhow::anyhow!("other")));
        let words: Result<Vec<u64>> = with_capacity(usize::MAX / 16, "words");
        assert!(words
            .unwrap_err()
            .to_string()
            .contains(&format!("{} bytes", usize::MAX / 16 * 8)));
        assert!(with_capacity::<u64>(4, "words").unwrap().capacity() >= 4);
    }
}
