//! `.npy` files and `.npz` archives of them.

use std::fs::File;
use std::io::{Cursor, Read};
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use half::f16;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadNpyExt, ReadableElement};
use zip::ZipArchive;

use crate::report::quoted_list;
use crate::tensor::{format_shape, DType, HostTensor, TensorInfo};

/// What the shape in a header must pass before its data is read.
pub(super) type ShapeCheck<'a> = &'a dyn Fn(&[usize]) -> Result<()>;

/// A `.npy` file in `dtype`, of any shape (its size is bounded by the file's).
pub fn load_npy(path: &Path, dtype: DType) -> Result<HostTensor> {
    load_npy_checked(path, dtype, &|_| Ok(()))
}

pub(super) fn load_npy_checked(path: &Path, dtype: DType, check: ShapeCheck) -> Result<HostTensor> {
    let file = File::open(path).map_err(|err| anyhow!("cannot read file: {err}"))?;
    let len = file.metadata().map_err(|err| anyhow!("cannot read file: {err}"))?.len();
    read_npy(file, len, dtype, check)
}

/// Loads one array of an archive: `key`, else the array named after the input, else the only one.
pub(super) fn load_npz(path: &Path, key: Option<&str>, info: &TensorInfo, check: ShapeCheck) -> Result<HostTensor> {
    let mut npz = Npz::open(path)?;
    let keys = npz.keys();
    let key = match key {
        Some(key) => key,
        None if keys.contains(&info.name) => &info.name,
        None if keys.len() == 1 => &keys[0],
        None => bail!(
            "no array named '{}' among {}: write PATH.npz:KEY",
            info.name,
            quoted_list(&keys)
        ),
    };
    npz.read(key, info.dtype, check)
}

/// An open `.npz` (a zip of `.npy` files, stored or deflated).
pub(super) struct Npz {
    archive: ZipArchive<File>,
}

impl Npz {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|err| anyhow!("cannot read file: {err}"))?;
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

    fn read(&mut self, key: &str, dtype: DType, check: ShapeCheck) -> Result<HostTensor> {
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
        read_npy(entry, len, dtype, check).map_err(|err| anyhow!("array '{key}': {err:#}"))
    }
}

/// The element types NumPy writes that a feed can take.
#[derive(Clone, Copy)]
enum Element {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16 { big_endian: bool },
    F32,
    F64,
}

impl Element {
    fn of(header: &Header) -> Result<Self> {
        let Some(descr) = header.type_descriptor.as_string() else {
            bail!("structured dtype {} is not supported", header.type_descriptor);
        };
        let code = descr.trim_start_matches(['<', '>', '|', '=']);
        let element = match code {
            "b1" => Element::Bool,
            "i1" => Element::I8,
            "i2" => Element::I16,
            "i4" => Element::I32,
            "i8" => Element::I64,
            "u1" => Element::U8,
            "u2" => Element::U16,
            "u4" => Element::U32,
            "u8" => Element::U64,
            "f2" => Element::F16 {
                big_endian: descr.starts_with('>'),
            },
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
        };
        Ok(element)
    }

    fn size(self) -> usize {
        match self {
            Element::Bool | Element::I8 | Element::U8 => 1,
            Element::I16 | Element::U16 | Element::F16 { .. } => 2,
            Element::I32 | Element::U32 | Element::F32 => 4,
            Element::I64 | Element::U64 | Element::F64 => 8,
        }
    }
}

/// Longer headers than NumPy itself writes or reads (its `max_header_size` is 10000).
const MAX_HEADER_LEN: usize = 1 << 16;

/// Reads the magic, version and header of a `.npy`; returns the header and
/// its bytes as read.
fn read_header(source: &mut impl Read) -> Result<(Header, Vec<u8>)> {
    let invalid = |what: &str| anyhow!("not a valid .npy file: {what}");
    let mut head = vec![0u8; 8];
    source.read_exact(&mut head).map_err(|_| invalid("too short"))?;
    if &head[..6] != b"\x93NUMPY" {
        return Err(invalid("no NUMPY magic"));
    }
    let len_size = if head[6] == 1 { 2 } else { 4 };
    let mut len = [0u8; 4];
    source
        .read_exact(&mut len[..len_size])
        .map_err(|_| invalid("too short"))?;
    head.extend_from_slice(&len[..len_size]);
    let header_len = u32::from_le_bytes(len) as usize;
    if header_len > MAX_HEADER_LEN {
        return Err(invalid(&format!("a header of {header_len} bytes")));
    }
    let start = head.len();
    head.resize(start + header_len, 0);
    source
        .read_exact(&mut head[start..])
        .map_err(|_| invalid("the header is cut short"))?;
    // The parser's own message draws a diagram over several lines: keep its first.
    let header = Header::from_reader(&mut head.as_slice()).map_err(|err| {
        let message = err.to_string();
        invalid(message.lines().next().unwrap_or_default().trim())
    })?;
    Ok((header, head))
}

/// Reads a `.npy` of `len` bytes from `source` into a tensor of `dtype`,
/// values in logical (C) order. The header is checked against `len` and
/// `check` before any of the data is read or allocated.
pub(super) fn read_npy(mut source: impl Read, len: u64, dtype: DType, check: ShapeCheck) -> Result<HostTensor> {
    let (header, head) = read_header(&mut source)?;
    let element = Element::of(&header)?;
    let shape = &header.shape;
    // ndarray refuses (by a panic) shapes whose non-zero dimensions overflow,
    // even when a zero dimension makes them empty.
    let span = shape
        .iter()
        .filter(|&&dim| dim != 0)
        .try_fold(element.size(), |bytes, &dim| bytes.checked_mul(dim))
        .filter(|&bytes| bytes <= isize::MAX as usize);
    let needed = span.map(|span| if shape.contains(&0) { 0 } else { span });
    let data_len = len.saturating_sub(head.len() as u64);
    if needed.map(|bytes| bytes as u64) != Some(data_len) {
        bail!(
            "not a valid .npy file: the header's shape {} of {} needs {} bytes of data, the file has {data_len}",
            format_shape(shape),
            header.type_descriptor,
            needed.map_or_else(|| "too many".to_string(), |bytes| bytes.to_string()),
        );
    }
    check(shape)?;
    let header_len = head.len();
    let whole = Cursor::new(head).chain(source);
    match element {
        Element::Bool => read_array::<bool>(whole, dtype),
        Element::I8 => read_array::<i8>(whole, dtype),
        Element::I16 => read_array::<i16>(whole, dtype),
        Element::I32 => read_array::<i32>(whole, dtype),
        Element::I64 => read_array::<i64>(whole, dtype),
        Element::U8 => read_array::<u8>(whole, dtype),
        Element::U16 => read_array::<u16>(whole, dtype),
        Element::U32 => read_array::<u32>(whole, dtype),
        Element::U64 => read_array::<u64>(whole, dtype),
        Element::F32 => read_array::<f32>(whole, dtype),
        Element::F64 => read_array::<f64>(whole, dtype),
        // ndarray-npy has no f16, so its data is decoded here.
        Element::F16 { big_endian } => {
            let mut bytes = Vec::with_capacity(len as usize);
            whole
                .take(len)
                .read_to_end(&mut bytes)
                .map_err(|err| anyhow!("cannot read the data: {err}"))?;
            let values = bytes[header_len..]
                .chunks_exact(2)
                .map(|pair| {
                    let pair = [pair[0], pair[1]];
                    if big_endian {
                        f16::from_be_bytes(pair)
                    } else {
                        f16::from_le_bytes(pair)
                    }
                })
                .collect();
            let shape = IxDyn(shape).set_f(header.layout.is_fortran());
            tensor_from_array(ArrayD::from_shape_vec(shape, values)?, dtype)
        }
    }
}

fn read_array<T: ReadableElement + ToF64>(source: impl Read, dtype: DType) -> Result<HostTensor> {
    let array = ArrayD::<T>::read_npy(source).map_err(|err| anyhow!("not a valid .npy file: {err}"))?;
    tensor_from_array(array, dtype)
}

fn tensor_from_array<T: ToF64>(array: ArrayD<T>, dtype: DType) -> Result<HostTensor> {
    // `iter` walks the logical order whatever the memory order (Fortran files stay Fortran).
    HostTensor::from_f64(array.shape().to_vec(), dtype, array.iter().map(|&value| value.to_f64()))
}

/// Widening to `f64`, from which `HostTensor::from_f64` casts like NumPy's `astype`.
trait ToF64: Copy {
    fn to_f64(self) -> f64;
}

macro_rules! impl_to_f64 {
    ($($t:ty),*) => {
        $(impl ToF64 for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        })*
    };
}

impl_to_f64!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl ToF64 for bool {
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
}

impl ToF64 for f16 {
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}
