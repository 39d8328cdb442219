//! The fast-run cache file as the engine reads it (`InFilePersistentCache`),
//! checked first: the engine trusts every count and length in it, and a
//! garbled one fails an assertion deep inside it, or worse.
//!
//! The format, little endian: `u32` categories, each a `u32`-length-prefixed
//! name, a `u32` item count and the items, each a length-prefixed key and a
//! length-prefixed value. An empty cache is four zero bytes. Two caches
//! merge item by item (`merge`): what two processes profiled at once is kept.

use anyhow::{bail, Result};

/// Checks that `bytes` are framed as a cache: every length inside what
/// follows it, and nothing after the last category.
pub fn check_framing(bytes: &[u8]) -> Result<()> {
    entries(bytes).map(|_| ())
}

/// A cache's categories, each its name and its items (key, value), in the file's order.
type Categories<'a> = Vec<(&'a [u8], Vec<(&'a [u8], &'a [u8])>)>;

/// The categories of a framed cache (see `check_framing`).
fn entries(bytes: &[u8]) -> Result<Categories<'_>> {
    let mut rest = bytes;
    let categories = count(&mut rest, "the category count")?;
    let mut read = Vec::new();
    for category in 0..categories {
        let name = blob(&mut rest, &format!("the name of category {category}"))?;
        let items = count(&mut rest, &format!("the item count of category {category}"))?;
        let mut held = Vec::new();
        for item in 0..items {
            let key = blob(&mut rest, &format!("the key of item {item} of category {category}"))?;
            let value = blob(&mut rest, &format!("the value of item {item} of category {category}"))?;
            held.push((key, value));
        }
        read.push((name, held));
    }
    if !rest.is_empty() {
        bail!("{} bytes follow its last category", rest.len());
    }
    Ok(read)
}

/// Two framed caches as one: every item of both, `newer`'s value where both
/// hold a key, categories and items in the order first seen (`older` first).
pub fn merge(older: &[u8], newer: &[u8]) -> Result<Vec<u8>> {
    let mut merged: Categories<'_> = entries(older)?;
    for (name, items) in entries(newer)? {
        let at = match merged.iter().position(|(held, _)| *held == name) {
            Some(at) => at,
            None => {
                merged.push((name, Vec::new()));
                merged.len() - 1
            }
        };
        let held = &mut merged[at].1;
        for (key, value) in items {
            match held.iter_mut().find(|(old, _)| *old == key) {
                Some(item) => item.1 = value,
                None => held.push((key, value)),
            }
        }
    }
    let mut bytes = Vec::new();
    put_count(&mut bytes, merged.len())?;
    for (name, items) in merged {
        put_blob(&mut bytes, name)?;
        put_count(&mut bytes, items.len())?;
        for (key, value) in items {
            put_blob(&mut bytes, key)?;
            put_blob(&mut bytes, value)?;
        }
    }
    Ok(bytes)
}

fn put_count(bytes: &mut Vec<u8>, count: usize) -> Result<()> {
    let Ok(count) = u32::try_from(count) else {
        bail!("a cache holds at most {} of anything", u32::MAX);
    };
    bytes.extend_from_slice(&count.to_le_bytes());
    Ok(())
}

fn put_blob(bytes: &mut Vec<u8>, blob: &[u8]) -> Result<()> {
    put_count(bytes, blob.len())?;
    bytes.extend_from_slice(blob);
    Ok(())
}

fn count(rest: &mut &[u8], what: &str) -> Result<u32> {
    let Some((word, after)) = rest.split_first_chunk::<4>() else {
        bail!("it ends before {what}");
    };
    *rest = after;
    Ok(u32::from_le_bytes(*word))
}

fn blob<'a>(rest: &mut &'a [u8], what: &str) -> Result<&'a [u8]> {
    let len = count(rest, &format!("the length of {what}"))? as usize;
    if len > rest.len() {
        bail!("{what} claims {len} bytes, {} are left", rest.len());
    }
    let (blob, after) = rest.split_at(len);
    *rest = after;
    Ok(blob)
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

    /// A category's name and its items (key, value).
    type Category<'a> = (&'a [u8], &'a [(&'a [u8], &'a [u8])]);

    fn cache_of(categories: &[Category]) -> Vec<u8> {
        let mut bytes = (categories.len() as u32).to_le_bytes().to_vec();
        for (name, items) in categories {
            bytes.extend(blob_of(name));
            bytes.extend((items.len() as u32).to_le_bytes());
            for (key, value) in *items {
                bytes.extend(blob_of(key));
                bytes.extend(blob_of(value));
            }
        }
        bytes
    }

    #[test]
    fn merges_two_caches_item_by_item_the_newer_winning() {
        let older = cache_of(&[(b"conv", &[(b"a", b"1"), (b"b", b"2")]), (b"matmul", &[(b"m", b"3")])]);
        let newer = cache_of(&[(b"conv", &[(b"b", b"20"), (b"c", b"30")]), (b"pool", &[(b"p", b"4")])]);
        let expected = cache_of(&[
            (b"conv", &[(b"a", b"1"), (b"b", b"20"), (b"c", b"30")]),
            (b"matmul", &[(b"m", b"3")]),
            (b"pool", &[(b"p", b"4")]),
        ]);
        assert_eq!(merge(&older, &newer).unwrap(), expected);
        assert_eq!(merge(&[0; 4], &newer).unwrap(), newer);
        assert!(merge(b"junk", &newer).is_err());
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
