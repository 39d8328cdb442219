//! The fast-run cache file as the engine reads it (`InFilePersistentCache`),
//! checked first: the engine trusts every count and length in it, and a
//! garbled one fails an assertion deep inside it, or worse.
//!
//! The format, little endian: `u32` categories, each a `u32`-length-prefixed
//! name, a `u32` item count and the items, each a length-prefixed key and a
//! length-prefixed value. An empty cache is four zero bytes.

use anyhow::{bail, Result};

/// Checks that `bytes` are framed as a cache: every length inside what
/// follows it, and nothing after the last category.
pub fn check_framing(bytes: &[u8]) -> Result<()> {
    let mut rest = bytes;
    let categories = count(&mut rest, "the category count")?;
    for category in 0..categories {
        blob(&mut rest, &format!("the name of category {category}"))?;
        let items = count(&mut rest, &format!("the item count of category {category}"))?;
        for item in 0..items {
            blob(&mut rest, &format!("the key of item {item} of category {category}"))?;
            blob(&mut rest, &format!("the value of item {item} of category {category}"))?;
        }
    }
    if !rest.is_empty() {
        bail!("{} bytes follow its last category", rest.len());
    }
    Ok(())
}

fn count(rest: &mut &[u8], what: &str) -> Result<u32> {
    let Some((word, after)) = rest.split_first_chunk::<4>() else {
        bail!("it ends before {what}");
    };
    *rest = after;
    Ok(u32::from_le_bytes(*word))
}

fn blob(rest: &mut &[u8], what: &str) -> Result<()> {
    let len = count(rest, &format!("the length of {what}"))? as usize;
    if len > rest.len() {
        bail!("{what} claims {len} bytes, {} are left", rest.len());
    }
    *rest = &rest[len..];
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob_of(bytes: &[u8]) -> Vec<u8> {
        [&(bytes.len() as u32).to_le_bytes()[..], bytes].concat()
    }

    #[test]
    fn accepts_caches_the_engine_writes() {
        assert!(check_framing(&[0; 4]).is_ok());
        let cache = [
            &1u32.to_le_bytes()[..],
            &blob_of(b"profile:plat=cpu:ConvolutionForwardv5F0"),
            &1u32.to_le_bytes(),
            &blob_of(b"1,3,16,16;Float32|"),
            &blob_of(b"\x01\0\0\0value"),
        ]
        .concat();
        assert!(check_framing(&cache).is_ok());
        for cut in 0..cache.len() {
            assert!(check_framing(&cache[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn refuses_what_the_engine_would_misread() {
        for (bytes, needle) in [
            (&b""[..], "ends before the category count"),
            (b"\x01\0\0\0\xff\xff\xff\x7f", "claims 2147483647 bytes"),
            (b"\xff\xff\xff\xff", "ends before the length of the name of category 0"),
            (b"\0\0\0\0junk", "4 bytes follow its last category"),
        ] {
            let err = check_framing(bytes).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
    }
}
