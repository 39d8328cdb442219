//! `.npy` files and `.npz` archives of them.

use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::input_files;
use crate::tensor::npy::{read_whole, Npy, NpyHeader, Npz};
use crate::tensor::{DType, HostTensor, TensorInfo};
use crate::text::quoted_list;

/// What the shape in a header must pass before its data is read.
pub(super) type ShapeCheck<'a> = &'a dyn Fn(&[usize]) -> Result<()>;

/// A `.npy` file in `dtype`, of any shape (its size is bounded by the file's).
pub fn load_npy(path: &Path, dtype: DType) -> Result<HostTensor> {
    load_npy_checked(path, dtype, &|_| Ok(())).map(|(tensor, _)| tensor)
}

/// The values in `dtype`, and the NumPy dtype (`float64`) the file stores.
pub(super) fn load_npy_checked(path: &Path, dtype: DType, check: ShapeCheck) -> Result<(HostTensor, &'static str)> {
    let (file, len) = input_files::open(path, &input_files::NPY)?;
    let bytes = read_whole(file, len, &|header: &NpyHeader| check(&header.shape))?;
    decode_npy(&bytes, dtype)
}

/// Array `key` of an archive in `dtype`.
pub fn load_npz_array(path: &Path, key: &str, dtype: DType) -> Result<HostTensor> {
    let mut npz = Npz::open(path)?;
    let (entry, len) = npz.entry(key)?;
    read_whole(entry, len, &|_| Ok(()))
        .and_then(|bytes| decode_npy(&bytes, dtype))
        .map(|(tensor, _)| tensor)
        .map_err(|err| anyhow!("array '{key}': {err:#}"))
}

/// Loads one array of an archive (see `array_key`), as `load_npy_checked`.
pub(super) fn load_npz(
    path: &Path,
    key: Option<&str>,
    info: &TensorInfo,
    check: ShapeCheck,
) -> Result<(HostTensor, &'static str)> {
    let mut npz = Npz::open(path)?;
    let key = array_key(&npz, key, info)?;
    let (entry, len) = npz.entry(&key)?;
    read_whole(entry, len, &|header: &NpyHeader| check(&header.shape))
        .and_then(|bytes| decode_npy(&bytes, info.dtype))
        .map_err(|err| anyhow!("array '{key}': {err:#}"))
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

/// Decodes a whole `.npy` file into a tensor of `dtype`, values taken in
/// logical (C) order; with the NumPy dtype the file stores.
pub(super) fn decode_npy(bytes: &[u8], dtype: DType) -> Result<(HostTensor, &'static str)> {
    let npy = Npy::parse(bytes)?;
    let tensor = HostTensor::from_f64(npy.shape.clone(), dtype, npy.view().values())?;
    Ok((tensor, npy.element.name()))
}
