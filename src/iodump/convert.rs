//! The engine's dumps turned into the index format. The binary dump
//! (MegEngine's `debug::dump_tensor`) is a file per var named by its id in
//! hex: `u32 name_len`, `u32 dtype` (megdnn's `DTypeEnum`), `u32 max_ndim`,
//! `u32 shape[max_ndim]` (unused dimensions 0), a title of `name_len` bytes,
//! then the contiguous values.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::index::{write_index, Index, IndexVar};
use crate::input_files;
use crate::output_files::{npy_file_stem, StagedSet};
use crate::tensor::{format_shape, DType, HostTensor, NonFinite};

/// An io dump made: its index, and the first var in execution order whose
/// values are not all finite, with how many are not.
pub struct Converted {
    pub index: Index,
    pub first_non_finite: Option<(IndexVar, NonFinite)>,
}

/// Converts the engine's binary dump in `engine_dir` into `.npy` files in
/// `set` for the `vars` that have one, and adds the index last.
pub fn convert_binary(vars: Vec<IndexVar>, engine_dir: &Path, set: &mut StagedSet, model: &str) -> Result<Converted> {
    let mut dumped_vars = Vec::new();
    let mut first_non_finite = None;
    for mut var in vars {
        let dumped = engine_dir.join(format!("{:06x}", var.id));
        // Workspaces and vars that held no value this run have no file.
        let Some(bytes) = input_files::read_if_present(&dumped, &input_files::ENGINE_DUMP)? else {
            continue;
        };
        let (shape, dtype) = read_binary(&bytes)
            .with_context(|| format!("the engine's dump of var '{}' ({})", var.name, dumped.display()))?;
        var.shape = Some(shape.clone());
        var.dtype = Some(match &dtype {
            Ok(dtype) => dtype.to_string(),
            Err(code) => format!("megdnn dtype {code}"),
        });
        if let Ok(dtype) = dtype {
            let data = bytes[bytes.len() - shape.iter().product::<usize>() * dtype.size()..].to_vec();
            let file = format!("{:04}_{}.npy", dumped_vars.len(), npy_file_stem(&var.name));
            let tensor = HostTensor { shape, dtype, data };
            set.add(file.clone().into(), &tensor.to_npy())?;
            var.file = Some(file);
            let counted = tensor.non_finite();
            if counted.any() && first_non_finite.is_none() {
                first_non_finite = Some((var.clone(), counted));
            }
        }
        dumped_vars.push(var);
    }
    if dumped_vars.is_empty() {
        bail!("the engine dumped no var");
    }
    Ok(Converted {
        index: write_index(set, index(model, "bin", dumped_vars))?,
        first_non_finite,
    })
}

/// The index of a text dump: every var, with the layout the engine planned for it.
pub fn index_text(vars: Vec<IndexVar>, set: &mut StagedSet, model: &str) -> Result<Converted> {
    Ok(Converted {
        index: write_index(set, index(model, "txt", vars))?,
        first_non_finite: None,
    })
}

fn index(model: &str, format: &str, vars: Vec<IndexVar>) -> Index {
    Index {
        model: model.to_string(),
        format: format.to_string(),
        vars,
    }
}

/// The shape and dtype of one file of the engine's binary dump, checked
/// against its length; the dtype's megdnn code when `.npy` cannot hold it.
fn read_binary(bytes: &[u8]) -> Result<(Vec<usize>, Result<DType, u32>)> {
    let word = |index: usize| -> Result<u32> {
        let start = index * 4;
        let slice = bytes
            .get(start..start + 4)
            .context("truncated header: not a file of the engine's binary io dump")?;
        Ok(u32::from_le_bytes(slice.try_into().unwrap()))
    };
    let (name_len, code, max_ndim) = (word(0)? as usize, word(1)?, word(2)? as usize);
    if max_ndim > 16 {
        bail!("header claims {max_ndim} dimensions: not a file of the engine's binary io dump");
    }
    let mut shape = (0..max_ndim)
        .map(|i| Ok(word(3 + i)? as usize))
        .collect::<Result<Vec<_>>>()?;
    while shape.last() == Some(&0) {
        shape.pop();
    }
    let header = 4 * (3 + max_ndim) + name_len;
    let dtype = match code {
        0 => Ok(DType::F32),
        1 | 100_000 => Ok(DType::U8),
        2 | 100_002 => Ok(DType::I8),
        3 => Ok(DType::I16),
        4 | 100_001 => Ok(DType::I32),
        9 => Ok(DType::F16),
        other => Err(other),
    };
    if let Ok(dtype) = dtype {
        let needed = shape.iter().product::<usize>() * dtype.size();
        if bytes.len() != header + needed {
            bail!(
                "shape {} of {dtype} needs {needed} bytes after the {header}-byte header, the file has {}",
                format_shape(&shape),
                bytes.len().saturating_sub(header)
            );
        }
    }
    Ok((shape, dtype))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(code: u32, shape: &[u32], title: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for word in [title.len() as u32, code, 7] {
            bytes.extend(word.to_le_bytes());
        }
        for i in 0..7 {
            bytes.extend(shape.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        bytes.extend(title.as_bytes());
        bytes.extend(data);
        bytes
    }

    #[test]
    fn reads_the_engine_binary_format() {
        let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let (shape, dtype) = read_binary(&binary(0, &[1, 2], "var={id:3}", &data)).unwrap();
        assert_eq!((shape, dtype), (vec![1, 2], Ok(DType::F32)));
        assert!(read_binary(&binary(0, &[1, 3], "t", &data)).is_err());
        assert_eq!(read_binary(&binary(8, &[4], "t", &[0; 4])).unwrap().1, Err(8));
        assert!(read_binary(&[1, 0, 0]).is_err());
    }
}
