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

/// Loads one array of an archive: `key`, else the array named after the input, else the only one.
pub(super) fn load_npz(path: &Path, key: Option<&str>, info: &TensorInfo) -> Result<HostTensor> {
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
    let bytes = npz.bytes(key)?;
    decode_npy(&bytes, info.dtype).map_err(|err| anyhow!("array '{key}': {err:#}"))
}

/// Decodes a whole `.npy` file into a tensor of `dtype`, values taken in logical (C) order.
pub(super) fn decode_npy(bytes: &[u8], dtype: DType) -> Result<HostTensor> {
    let npy = Npy::parse(bytes)?;
    HostTensor::from_f64(npy.shape.clone(), dtype, npy.view().values())
}
