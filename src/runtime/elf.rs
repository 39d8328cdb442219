//! Whether a shared library is whole before it is loaded: the loader maps each
//! segment its headers name, and a page past the end of a truncated file ends
//! the process with SIGBUS when first touched, before any error can be said.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{bail, Context, Result};

/// ELF64's header and program header sizes, and the segment type the loader maps.
const HEADER_LEN: usize = 64;
const PROGRAM_HEADER_LEN: usize = 56;
const PT_LOAD: u32 = 1;

fn u16_at(bytes: &[u8], pos: usize) -> u64 {
    u64::from(u16::from_le_bytes([bytes[pos], bytes[pos + 1]]))
}

fn u32_at(bytes: &[u8], pos: usize) -> u32 {
    u32::from_le_bytes(bytes[pos..pos + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], pos: usize) -> u64 {
    u64::from_le_bytes(bytes[pos..pos + 8].try_into().expect("8 bytes"))
}

/// Refuses a little-endian ELF64 file (the only kind this machine loads) that
/// ends before its program headers or a segment the loader maps. Anything else
/// is left to the loader, which refuses it in words.
pub fn ensure_whole(path: &Path, what: &str) -> Result<()> {
    let cannot_read = || format!("{what} {}: cannot read it", path.display());
    // Opening a FIFO would block; a device is no library.
    if !std::fs::metadata(path).with_context(cannot_read)?.is_file() {
        bail!("{what} {} is not a regular file: give a library", path.display());
    }
    let mut file = File::open(path).with_context(cannot_read)?;
    let len = file.metadata().with_context(cannot_read)?.len();
    let mut header = [0; HEADER_LEN];
    if file.read_exact(&mut header).is_err() || header[..6] != *b"\x7fELF\x02\x01" {
        return Ok(());
    }
    let (program_headers, count) = (u64_at(&header, 0x20), u16_at(&header, 0x38));
    let table_end = program_headers.saturating_add(count * PROGRAM_HEADER_LEN as u64);
    let mut needed = table_end;
    if table_end <= len {
        let mut table = vec![0; (count as usize) * PROGRAM_HEADER_LEN];
        file.seek(SeekFrom::Start(program_headers)).with_context(cannot_read)?;
        file.read_exact(&mut table).with_context(cannot_read)?;
        for entry in table.chunks_exact(PROGRAM_HEADER_LEN) {
            if u32_at(entry, 0) == PT_LOAD {
                needed = needed.max(u64_at(entry, 8).saturating_add(u64_at(entry, 32)));
            }
        }
    }
    if needed > len {
        bail!(
            "{what} {} is cut short: its headers need {needed} bytes and it has {len} (a truncated copy?): give the whole library",
            path.display()
        );
    }
    Ok(())
}

/// Where the section `name` lies in the ELF64 file `path`: its offset and
/// size, or `None` when the file is no such ELF file, has no section table
/// or no such section.
pub fn section(path: &Path, name: &str) -> Result<Option<(u64, u64)>> {
    const SECTION_HEADER_LEN: u64 = 64;
    let cannot_read = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(cannot_read)?;
    let len = file.metadata().with_context(cannot_read)?.len();
    let mut header = [0; HEADER_LEN];
    if file.read_exact(&mut header).is_err() || header[..6] != *b"\x7fELF\x02\x01" {
        return Ok(None);
    }
    let (table, count, names_index) = (u64_at(&header, 0x28), u16_at(&header, 0x3c), u16_at(&header, 0x3e));
    let table_end = table.saturating_add(count * SECTION_HEADER_LEN);
    if table == 0 || names_index >= count || table_end > len {
        return Ok(None);
    }
    let mut headers = vec![0; (count * SECTION_HEADER_LEN) as usize];
    file.seek(SeekFrom::Start(table)).with_context(cannot_read)?;
    file.read_exact(&mut headers).with_context(cannot_read)?;
    let place = |index: u64| {
        let entry = &headers[(index * SECTION_HEADER_LEN) as usize..][..SECTION_HEADER_LEN as usize];
        (u32_at(entry, 0), u64_at(entry, 0x18), u64_at(entry, 0x20))
    };
    let (_, names_offset, names_size) = place(names_index);
    if names_offset.saturating_add(names_size) > len || names_size > 1 << 20 {
        return Ok(None);
    }
    let mut names = vec![0; names_size as usize];
    file.seek(SeekFrom::Start(names_offset)).with_context(cannot_read)?;
    file.read_exact(&mut names).with_context(cannot_read)?;
    let wanted = name.as_bytes();
    for index in 0..count {
        let (name_at, offset, size) = place(index);
        let found = names
            .get(name_at as usize..)
            .is_some_and(|rest| rest.starts_with(wanted) && rest.get(wanted.len()) == Some(&0));
        if found && offset.saturating_add(size) <= len {
            return Ok(Some((offset, size)));
        }
    }
    Ok(None)
}

/// The size of the reads of `scan_rodata`.
pub(super) const CHUNK: usize = 1 << 20;

/// Reads the `.rodata` of the ELF file `path` (the whole file where it has
/// none) in windows of about a megabyte until `look` finds what it looks
/// for. Each window begins with the last bytes of the one before, so that a
/// string up to `longest` bytes long lies whole in one: `look` sees the
/// window and where in it such a string must start to be whole (its end, in
/// the last window), and may see one near a window's end twice.
pub fn scan_rodata<T>(
    path: &Path,
    longest: usize,
    mut look: impl FnMut(&[u8], usize) -> Option<T>,
) -> Result<Option<T>> {
    let cannot_read = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(cannot_read)?;
    let (offset, size) = match section(path, ".rodata")? {
        Some(place) => place,
        None => (0, file.metadata().with_context(cannot_read)?.len()),
    };
    file.seek(SeekFrom::Start(offset)).with_context(cannot_read)?;
    let mut section = file.take(size);
    let mut window = Vec::with_capacity(CHUNK + 2 * longest);
    loop {
        let before = window.len();
        (&mut section)
            .take(CHUNK as u64)
            .read_to_end(&mut window)
            .with_context(cannot_read)?;
        let at_end = window.len() == before;
        // A string that may go on past the window waits for the next one.
        let settled = match at_end {
            true => window.len(),
            false => window.len().saturating_sub(longest),
        };
        if let Some(found) = look(&window, settled) {
            return Ok(Some(found));
        }
        if at_end {
            return Ok(None);
        }
        window.drain(..window.len().saturating_sub(2 * longest));
    }
}
