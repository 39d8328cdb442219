//! `.npy` files and `.npz` archives of them.

use std::fs::File;
use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::report::quoted_list;
use crate::tensor::npy::{read_header, read_whole, Npy, NpyHeader, Npz};
use crate::tensor::{DType, HostTensor, TensorInfo};

/// What the shape in a header must pass before its data is read.
pub(super) type ShapeCheck<'a> = &'a dyn Fn(&[usize]) -> Result<()>;

/// A `.npy` file in `dtype`, of any shape (its size is bounded by the file's).
pub fn load_npy(path: &Path, dtype: DType) -> Result<HostTensor> {
    load_npy_checked(path, dtype, &|_| Ok(()))
}

pub(super) fn load_npy_checked(path: &Path, dtype: DType, check: ShapeCheck) -> Result<HostTensor> {
    let file = File::open(path).map_err(|err| anyhow!("cannot read file: {err}"))?;
    let len = file.metadata().map_err(|err| anyhow!("cannot read file: {err}"))?.len();
    let bytes = read_whole(file, len, &|header: &NpyHeader| check(&header.shape))?;
    decode_npy(&bytes, dtype)
}

/// Loads one array of an archive (see `array_key`).
pub(super) fn load_npz(path: &Path, key: Option<&str>, info: &TensorInfo, check: ShapeCheck) -> Result<HostTensor> {
    let mut npz = Npz::open(path)?;
    let key = array_key(&npz, key, info)?;
    let (entry, len) = npz.entry(&key)?;
    let bytes = read_whole(entry, len, &|header: &NpyHeader| check(&header.shape))
        .map_err(|err| anyhow!("array '{key}': {err:#}"))?;
    decode_npy(&bytes, info.dtype).map_err(|err| anyhow!("array '{key}': {err:#}"))
}

/// `key`, else the array named after the input, else the only one.
fn array_key(npz: &Npz, key: Option<&str>, info: &TensorInfo) -> Result<String> {
    let keys = npz.keys();
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

/// The NumPy dtype (`float64`) of the array `load_npy` or `load_npz` (`npz_key`
/// set) reads, from its header alone; `None` when it cannot be read (loading says why).
pub(super) fn stored_dtype(path: &Path, npz_key: Option<Option<&str>>, info: &TensorInfo) -> Option<&'static str> {
    let header = match npz_key {
        None => {
            let mut file = File::open(path).ok()?;
            let len = file.metadata().ok()?.len();
            read_header(&mut file, len).ok()?.0
        }
        Some(key) => {
            let mut npz = Npz::open(path).ok()?;
            let key = array_key(&npz, key, info).ok()?;
            let (mut entry, len) = npz.entry(&key).ok()?;
            read_header(&mut entry, len).ok()?.0
        }
    };
    Some(header.element.name())
}

/// Decodes a whole `.npy` file into a tensor of `dtype`, values taken in logical (C) order.
pub(super) fn decode_npy(bytes: &[u8], dtype: DType) -> Result<HostTensor> {
    let npy = Npy::parse(bytes)?;
    HostTensor::from_f64(npy.shape.clone(), dtype, npy.view().values())
}
