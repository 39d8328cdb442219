//! Reading `.npy` files: the header, then the data as it is stored, viewed
//! without copying (large reference tensors are read once).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use ndarray_npy::npy::header::Header;
use zip::ZipArchive;

use super::{format_shape, Element, TensorView};
use crate::input_files;
use crate::memory;
use crate::text::quoted_list;

/// An `.npy` file parsed in place.
pub struct Npy<'a> {
    pub element: Element,
    pub shape: Vec<usize>,
    fortran: bool,
    big_endian: bool,
    data: &'a [u8],
}

/// Longer headers than NumPy itself writes or reads (its `max_header_size` is 10000).
pub const MAX_HEADER_LEN: usize = 1 << 16;

/// A `.npy` header: what the data must be.
pub struct NpyHeader {
    pub element: Element,
    pub shape: Vec<usize>,
    fortran: bool,
    big_endian: bool,
    /// Bytes from the start of the file to the data.
    pub len: usize,
}

impl NpyHeader {
    /// Parses the header at the start of `bytes` (which need hold no more of
    /// the file) and checks that a file of `file_len` bytes holds its data
    /// exactly: a corrupt header cannot claim more than the file holds.
    pub fn parse(bytes: &[u8], file_len: u64) -> Result<NpyHeader> {
        // Version 1 counts the header in a u16, later versions in a u32.
        let header_len = match bytes.get(6..12) {
            Some([1, _, a, b, ..]) => u16::from_le_bytes([*a, *b]) as usize,
            Some([_, _, a, b, c, d]) => u32::from_le_bytes([*a, *b, *c, *d]) as usize,
            _ => 0,
        };
        if header_len > MAX_HEADER_LEN {
            bail!("not a valid .npy file: a header of {header_len} bytes");
        }
        let mut rest = bytes;
        let header = Header::from_reader(&mut rest).map_err(|err| {
            // The parser draws a diagram over several lines: its first says what is wrong.
            let message = err.to_string();
            anyhow!(
                "not a valid .npy file: {}",
                message.lines().next().unwrap_or_default().trim()
            )
        })?;
        let len = bytes.len() - rest.len();
        let Some(descr) = header.type_descriptor.as_string() else {
            bail!("structured dtype {} is not supported", header.type_descriptor);
        };
        let element = element_of(descr)?;
        // Non-zero dimensions that overflow make a hostile header even when a zero one
        // empties the array.
        let span = header
            .shape
            .iter()
            .filter(|&&dim| dim != 0)
            .try_fold(element.size(), |bytes, &dim| bytes.checked_mul(dim))
            .filter(|&bytes| bytes <= isize::MAX as usize);
        let needed = span.map(|span| if header.shape.contains(&0) { 0 } else { span });
        let data_len = file_len.saturating_sub(len as u64);
        if needed.map(|bytes| bytes as u64) != Some(data_len) {
            bail!(
                "not a valid .npy file: the header's shape {} of {} needs {} bytes of data, the file has {data_len}",
                format_shape(&header.shape),
                header.type_descriptor,
                needed.map_or_else(|| "too many".to_string(), |bytes| bytes.to_string()),
            );
        }
        Ok(NpyHeader {
            element,
            fortran: header.layout.is_fortran(),
            big_endian: descr.starts_with('>'),
            shape: header.shape,
            len,
        })
    }
}

impl<'a> Npy<'a> {
    /// Parses a whole `.npy` file, checking that its data fills the header's shape.
    pub fn parse(bytes: &'a [u8]) -> Result<Npy<'a>> {
        let header = NpyHeader::parse(bytes, bytes.len() as u64)?;
        Ok(Npy {
            element: header.element,
            fortran: header.fortran,
            big_endian: header.big_endian,
            data: &bytes[header.len..],
            shape: header.shape,
        })
    }

    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            shape: &self.shape,
            element: self.element,
            data: self.data,
            fortran: self.fortran,
            big_endian: self.big_endian,
            real: None,
        }
    }
}

/// The element type of a NumPy type string such as `<f4`.
fn element_of(descr: &str) -> Result<Element> {
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    Ok(match code {
        "b1" => Element::Bool,
        "i1" => Element::I8,
        "i2" => Element::I16,
        "i4" => Element::I32,
        "i8" => Element::I64,
        "u1" => Element::U8,
        "u2" => Element::U16,
        "u4" => Element::U32,
        "u8" => Element::U64,
        "f2" => Element::F16,
        "f4" => Element::F32,
        "f8" => Element::F64,
        _ => {
            let kind = match code.chars().next() {
                Some('c') => "complex ",
                Some('O') => "object ",
                Some('U' | 'S' | 'a') => "string ",
                Some('M' | 'm') => "datetime ",
                _ => "",
            };
            bail!("{kind}dtype '{descr}' is not supported: expected a numeric or bool array");
        }
    })
}

/// An open `.npz` (a zip of `.npy` files, stored or deflated).
pub struct Npz {
    archive: ZipArchive<File>,
}

impl Npz {
    pub fn open(path: &Path) -> Result<Self> {
        let (file, _) = input_files::open(path, &input_files::NPZ)?;
        let archive = ZipArchive::new(file).map_err(|err| anyhow!("not a valid .npz archive: {err}"))?;
        Ok(Npz { archive })
    }

    /// Array names, as NumPy's `np.load(...).files` lists them (without `.npy`).
    pub fn keys(&self) -> Vec<String> {
        self.archive
            .file_names()
            .map(|name| name.strip_suffix(".npy").unwrap_or(name).to_string())
            .collect()
    }

    /// The `.npy` file of array `key`, whole.
    pub fn bytes(&mut self, key: &str) -> Result<Vec<u8>> {
        let (entry, len) = self.entry(key)?;
        read_whole(entry, len, &|_| Ok(())).map_err(|err| anyhow!("array '{key}': {err:#}"))
    }

    /// A reader of the `.npy` file of array `key`, and its length.
    pub fn entry(&mut self, key: &str) -> Result<(impl Read + '_, u64)> {
        let entry_name = [format!("{key}.npy"), key.to_string()]
            .into_iter()
            .find(|name| self.archive.index_for_name(name).is_some())
            .ok_or_else(|| {
                anyhow!(
                    "no array '{key}' in the archive; its keys are {}",
                    quoted_list(self.keys())
                )
            })?;
        let entry = self
            .archive
            .by_name(&entry_name)
            .map_err(|err| anyhow!("cannot read array '{key}': {err}"))?;
        let len = entry.size();
        // Deflate makes at most 1032 bytes of one: a larger claim is a lie, refused
        // before anything is allocated for it.
        if len > entry.compressed_size().saturating_mul(1032).saturating_add(1024) {
            bail!(
                "not a valid .npz archive: array '{key}' claims {len} bytes from {} compressed",
                entry.compressed_size()
            );
        }
        input_files::NPY.check_len(format!("'{key}' in the archive"), len)?;
        Ok((entry, len))
    }
}

/// Reads the start of a `.npy` file of `len` bytes from `source`, up to a
/// little more than the longest header: its header, and the bytes read.
fn read_header(source: &mut impl Read, len: u64) -> Result<(NpyHeader, Vec<u8>)> {
    let mut bytes = Vec::new();
    source
        .take(MAX_HEADER_LEN as u64 + 12)
        .read_to_end(&mut bytes)
        .map_err(|err| anyhow!("cannot read the file: {err}"))?;
    Ok((NpyHeader::parse(&bytes, len)?, bytes))
}

/// Reads a `.npy` file of `len` bytes from `source`: the header first, checked
/// against `len` and by `check`, so that nothing is allocated for data a
/// header only claims (a few bytes of zip can inflate to gigabytes).
pub fn read_whole(source: impl Read, len: u64, check: &dyn Fn(&NpyHeader) -> Result<()>) -> Result<Vec<u8>> {
    let mut source = source.take(len);
    let (header, mut bytes) = read_header(&mut source, len)?;
    check(&header)?;
    let data = usize::try_from(len).unwrap_or(usize::MAX).saturating_sub(bytes.len());
    memory::reserve(&mut bytes, data, "the array")?;
    source
        .read_to_end(&mut bytes)
        .map_err(|err| anyhow!("cannot read the data: {err}"))?;
    if bytes.len() as u64 != len {
        bail!("not a valid .npy file: it ends after {} of {len} bytes", bytes.len());
    }
    Ok(bytes)
}
