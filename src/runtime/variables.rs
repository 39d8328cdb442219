//! Which environment variables a runtime reads, from its files: each name
//! `getenv` takes is a string in the library's `.rodata`.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use regex::bytes::Regex;

use super::elf;
use super::installed::with_its_engine;

/// Of the variables `names`, those the runtime whose Lite library is
/// `lite_library` reads: named as a string in its `.rodata` or its engine's
/// beside it. Read without loading either; a name not in ASCII is none of them.
pub fn variables_read(lite_library: &Path, names: &[String]) -> Result<Vec<String>> {
    let names: Vec<&String> = names
        .iter()
        .filter(|name| !name.is_empty() && name.is_ascii())
        .collect();
    let Some(longest) = names.iter().map(|name| name.len() + 1).max() else {
        return Ok(Vec::new());
    };
    let alternatives: Vec<String> = names.iter().map(|name| regex::escape(name)).collect();
    // A string's end: the compiler may keep one as the tail of a longer one.
    let string = Regex::new(&format!("(?:{})\\x00", alternatives.join("|")))?;
    let mut found = BTreeSet::new();
    for library in with_its_engine(lite_library) {
        elf::scan_rodata(&library, longest, |window, _| {
            found.extend(
                string
                    .find_iter(window)
                    .map(|name| name.as_bytes()[..name.len() - 1].to_vec()),
            );
            None::<()>
        })?;
    }
    Ok(names
        .into_iter()
        .filter(|name| found.contains(name.as_bytes()))
        .cloned()
        .collect())
}
