//! `.npy` files and `.npz` archives of them.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use half::f16;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadNpyExt, ReadableElement};
use zip::ZipArchive;

use crate::report::quoted_list;
use crate::tensor::{format_shape, DType, HostTensor, TensorInfo};

pub fn load_npy(path: &Path, dtype: DType) -> Result<HostTensor> {
    let bytes = std::fs::read(path).map_err(|err| anyhow!("cannot read file: {err}"))?;
    decode_npy(&bytes, dtype)
}

/// Loads one array of an archive: `key`, else the array named after the input, else the only one.
pub(super) fn load_npz(path: &Path, key: Option<&str>, info: &TensorInfo) -> Result<HostTensor> {
    let mut npz = Npz::open(path)?;
    let key = npz.key_for(key, info)?;
    npz.read(&key, info.dtype)
}

/// The NumPy dtype (`float64`) of the array `load_npy` or `load_npz` reads, from
/// its header alone; `None` when it cannot be read (loading says why).
pub(super) fn stored_dtype(path: &Path, npz_key: Option<Option<&str>>, info: &TensorInfo) -> Option<&'static str> {
    let header = match npz_key {
        None => Header::from_reader(&mut File::open(path).ok()?).ok()?,
        Some(key) => {
            let mut npz = Npz::open(path).ok()?;
            let key = npz.key_for(key, info).ok()?;
            let name = npz.entry_name(&key).ok()?;
            let mut entry = npz.archive.by_name(&name).ok()?;
            Header::from_reader(&mut entry).ok()?
        }
    };
    Some(Element::of(&header).ok()?.name())
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

    /// `key`, else the array named after the input, else the only one.
    fn key_for(&self, key: Option<&str>, info: &TensorInfo) -> Result<String> {
        let keys = self.keys();
        match key {
            Some(key) => Ok(key.to_string()),
            None if keys.contains(&info.name) => Ok(info.name.clone()),
            None if keys.len() == 1 => Ok(keys[0].clone()),
            None => bail!(
                "no array named '{}' among {}: write PATH.npz:KEY",
                info.name,
                quoted_list(&keys)
            ),
        }
    }

    /// The archive member holding array `key`.
    fn entry_name(&self, key: &str) -> Result<String> {
        [format!("{key}.npy"), key.to_string()]
            .into_iter()
            .find(|name| self.archive.index_for_name(name).is_some())
            .ok_or_else(|| {
                anyhow!(
                    "no array '{key}' in the archive; its keys are {}",
                    quoted_list(self.keys())
                )
            })
    }

    fn read(&mut self, key: &str, dtype: DType) -> Result<HostTensor> {
        let entry_name = self.entry_name(key)?;
        let mut bytes = Vec::new();
        self.archive
            .by_name(&entry_name)
            .map_err(|err| anyhow!("cannot read array '{key}': {err}"))?
            .read_to_end(&mut bytes)
            .map_err(|err| anyhow!("cannot read array '{key}': {err}"))?;
        decode_npy(&bytes, dtype).map_err(|err| anyhow!("array '{key}': {err:#}"))
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

    /// NumPy's name of the dtype.
    fn name(self) -> &'static str {
        match self {
            Element::Bool => "bool",
            Element::I8 => "int8",
            Element::I16 => "int16",
            Element::I32 => "int32",
            Element::I64 => "int64",
            Element::U8 => "uint8",
            Element::U16 => "uint16",
            Element::U32 => "uint32",
            Element::U64 => "uint64",
            Element::F16 { .. } => "float16",
            Element::F32 => "float32",
            Element::F64 => "float64",
        }
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

/// Decodes a whole `.npy` file into a tensor of `dtype`, values taken in logical (C) order.
pub(super) fn decode_npy(bytes: &[u8], dtype: DType) -> Result<HostTensor> {
    let mut data = bytes;
    let header = Header::from_reader(&mut data).map_err(|err| anyhow!("not a valid .npy file: {err}"))?;
    let element = Element::of(&header)?;
    // Checked before reading so that a corrupt header cannot ask for a huge allocation.
    let needed = header
        .shape
        .iter()
        .try_fold(element.size(), |bytes, &dim| bytes.checked_mul(dim));
    if needed != Some(data.len()) {
        bail!(
            "not a valid .npy file: the header's shape {} of {} needs {} bytes of data, the file has {}",
            format_shape(&header.shape),
            header.type_descriptor,
            needed.map_or_else(|| "too many".to_string(), |bytes| bytes.to_string()),
            data.len()
        );
    }
    match element {
        Element::Bool => read_array::<bool>(bytes, dtype),
        Element::I8 => read_array::<i8>(bytes, dtype),
        Element::I16 => read_array::<i16>(bytes, dtype),
        Element::I32 => read_array::<i32>(bytes, dtype),
        Element::I64 => read_array::<i64>(bytes, dtype),
        Element::U8 => read_array::<u8>(bytes, dtype),
        Element::U16 => read_array::<u16>(bytes, dtype),
        Element::U32 => read_array::<u32>(bytes, dtype),
        Element::U64 => read_array::<u64>(bytes, dtype),
        Element::F32 => read_array::<f32>(bytes, dtype),
        Element::F64 => read_array::<f64>(bytes, dtype),
        // ndarray-npy has no f16, so its data is decoded here.
        Element::F16 { big_endian } => {
            let values = data
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
            let shape = IxDyn(&header.shape).set_f(header.layout.is_fortran());
            tensor_from_array(ArrayD::from_shape_vec(shape, values)?, dtype)
        }
    }
}

fn read_array<T: ReadableElement + ToF64>(bytes: &[u8], dtype: DType) -> Result<HostTensor> {
    let array = ArrayD::<T>::read_npy(bytes).map_err(|err| anyhow!("not a valid .npy file: {err}"))?;
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
