//! `.npy` files and `.npz` archives of them.

use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::report::quoted_list;
use crate::tensor::npy::{Npy, Npz};
use crate::tensor::{DType, HostTensor, TensorInfo};

pub fn load_npy(path: &Path, dtype: DType) -> Result<HostTensor> {
    let bytes = std::fs::read(path).map_err(|err| anyhow!("cannot read file: {err}"))?;
    decode_npy(&bytes, dtype)
}

/// Loads one array of an archive (see `array_key`).
pub(super) fn load_npz(path: &Path, key: Option<&str>, info: &TensorInfo) -> Result<HostTensor> {
    let mut npz = Npz::open(path)?;
    let key = array_key(&npz, key, info)?;
    let bytes = npz.bytes(&key)?;
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
/// set) reads; `None` when it cannot be read (loading says why).
pub(super) fn stored_dtype(path: &Path, npz_key: Option<Option<&str>>, info: &TensorInfo) -> Option<&'static str> {
    let bytes = match npz_key {
        None => std::fs::read(path).ok()?,
        Some(key) => {
            let mut npz = Npz::open(path).ok()?;
            let key = array_key(&npz, key, info).ok()?;
            npz.bytes(&key).ok()?
        }
    };
    Some(Npy::parse(&bytes).ok()?.view().element.name())
}

/// Decodes a whole `.npy` file into a tensor of `dtype`, values taken in logical (C) order.
pub(super) fn decode_npy(bytes: &[u8], dtype: DType) -> Result<HostTensor> {
    let npy = Npy::parse(bytes)?;
    HostTensor::from_f64(npy.shape.clone(), dtype, npy.view().values())
}
