//! The engine's dumps turned into the index format. The binary dump
//! (MegEngine's `debug::dump_tensor`) is a file per var named by its id in
//! hex: `u32 name_len`, `u32 dtype` (megdnn's `DTypeEnum`), `u32 max_ndim`,
//! `u32 shape[max_ndim]` (unused dimensions 0), a title of `name_len` bytes,
//! then the contiguous values.

use std::path::Path;

use std::collections::HashMap;

use anyhow::{bail, Context, Result};

use super::index::{write_index, Heading, Index, IndexVar};
use crate::input_files;
use crate::model::Quantization;
use crate::output_files::{npy_file_stem, StagedSet};
use crate::tensor::{bool_npy, format_shape, DType, HostTensor, NonFinite};

/// megdnn's `DTypeEnum` code of `Bool` (masks: `scores > threshold`), a byte each.
const BOOL: u32 = 12;

/// An io dump made: its index, and the first var in execution order whose
/// values are not all finite, with how many are not.
pub struct Converted {
    pub index: Index,
    pub first_non_finite: Option<(IndexVar, NonFinite)>,
}

/// Converts the engine's binary dump in `engine_dir` into `.npy` files in
/// `set` for the `vars` that have one, and adds the index last. A var
/// names its file in `file` (a raw dump's index), else by its id. `heading`
/// names the model and its outputs (none where not known). A quantized
/// var's scale is the model graph's (`quantized`, by var name): the
/// engine's files keep only the dtype.
pub fn convert_binary(
    vars: Vec<IndexVar>,
    engine_dir: &Path,
    set: &mut StagedSet,
    heading: Heading,
    quantized: &HashMap<String, Quantization>,
) -> Result<Converted> {
    let mut dumped_vars = Vec::new();
    let mut first_non_finite = None;
    for mut var in vars {
        // The engine names its files by var id; a raw dump's index names each file.
        let dumped = engine_dir.join(var.file.take().unwrap_or_else(|| format!("{:06x}", var.id)));
        // Workspaces and vars that held no value this run have no file.
        let Some(bytes) = input_files::read_if_present(&dumped, &input_files::ENGINE_DUMP)? else {
            continue;
        };
        let read = read_binary(&bytes)
            .with_context(|| format!("the engine's dump of var '{}' ({})", var.name, dumped.display()))?;
        var.shape = Some(read.shape.clone());
        var.dtype = Some(read.dtype_name());
        if let Some((_, asymmetric)) = read.quantized {
            match quantized.get(&var.name) {
                Some(quantization) => {
                    var.scale = Some(f64::from(quantization.scale));
                    var.zero_point = asymmetric.then(|| quantization.zero_point.unwrap_or(0));
                }
                None => (var.scale, var.zero_point) = deduced_quantization(&var, &dumped_vars),
            }
        }
        if let Some(npy) = read.npy(&bytes) {
            let file = format!("{:04}_{}.npy", dumped_vars.len(), npy_file_stem(&var.name));
            set.add(file.clone().into(), &npy)?;
            var.file = Some(file);
            let counted = read
                .tensor(&bytes)
                .map(|tensor| tensor.non_finite())
                .unwrap_or_default();
            if counted.any() && first_non_finite.is_none() {
                first_non_finite = Some((var.clone(), counted));
            }
        }
        dumped_vars.push(var);
    }
    // A run the engine refused at its first operator dumped none before it.
    if dumped_vars.is_empty() && heading.failed_at.is_none() {
        bail!("the engine dumped no var");
    }
    Ok(Converted {
        index: write_index(set, index(heading, "bin", dumped_vars))?,
        first_non_finite,
    })
}

/// The index of a text dump: every var, with the layout the engine planned for it.
pub fn index_text(vars: Vec<IndexVar>, set: &mut StagedSet, heading: Heading) -> Result<Converted> {
    Ok(Converted {
        index: write_index(set, index(heading, "txt", vars))?,
        first_non_finite: None,
    })
}

/// The scale and zero point of a quantized var the graph stores none for,
/// as megdnn deduces its operator's output dtype from its inputs' (`before`,
/// in execution order): a product of the two scales for a matrix
/// multiplication (`qint8` by `qint8` into `qint32`), else the first
/// input's (pooling, reshaping, elementwise operators on one scale). None
/// for another type, or an input of unknown scale.
fn deduced_quantization(var: &IndexVar, before: &[IndexVar]) -> (Option<f64>, Option<u8>) {
    let input = |index: usize| {
        let name = var.inputs.get(index)?;
        before.iter().rev().find(|other| &other.name == name)
    };
    let Some(first) = input(0) else {
        return (None, None);
    };
    match var.op_type.as_str() {
        "MatrixMul" | "BatchedMatrixMul" | "MatrixMulV2" | "BatchedMatrixMulV2" => {
            let scale = first.scale.zip(input(1).and_then(|second| second.scale));
            (scale.map(|(a, b)| a * b), None)
        }
        "PoolingForward"
        | "Pooling"
        | "Reshape"
        | "Dimshuffle"
        | "AxisAddRemove"
        | "Subtensor"
        | "Broadcast"
        | "Concat"
        | "Identity"
        | "Copy"
        | "Elemwise"
        | "AdaptivePoolingForward" => (first.scale, first.zero_point),
        _ => (None, None),
    }
}

fn index(heading: Heading, format: &str, vars: Vec<IndexVar>) -> Index {
    Index {
        model: heading.model.to_string(),
        format: format.to_string(),
        vars,
        outputs: heading.outputs,
        failed_at: heading.failed_at,
    }
}

/// One file of the engine's binary dump, its header read.
#[derive(Clone)]
pub struct Dumped {
    /// What the engine says of the var (`var={id:..., owner:..., name:...} owner_opr_inputs=...`).
    pub title: String,
    pub shape: Vec<usize>,
    /// The megdnn dtype code where `.npy` cannot hold the values.
    pub dtype: Result<DType, u32>,
    /// A quantized dtype's name, and whether it has a zero point; `dtype`
    /// is then how its values are stored.
    pub quantized: Option<(&'static str, bool)>,
    /// Where the values start.
    pub data_offset: usize,
}

impl Dumped {
    pub fn dtype_name(&self) -> String {
        if let Some((name, _)) = self.quantized {
            return name.to_string();
        }
        match &self.dtype {
            Ok(dtype) => dtype.to_string(),
            Err(BOOL) => "bool".to_string(),
            Err(code) => format!("megdnn dtype {code}"),
        }
    }

    /// The values of the file `bytes` this header was read from as a `.npy` file,
    /// where `.npy` can hold them.
    pub fn npy(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        match self.dtype {
            Ok(_) => self.tensor(bytes).map(|tensor| tensor.to_npy()),
            Err(BOOL) => Some(bool_npy(&self.shape, bytes.get(self.data_offset..)?)),
            Err(_) => None,
        }
    }

    /// The values of the file `bytes` this header was read from, where `.npy` can hold them.
    pub fn tensor(&self, bytes: &[u8]) -> Option<HostTensor> {
        let dtype = self.dtype.ok()?;
        Some(HostTensor {
            shape: self.shape.clone(),
            dtype,
            data: bytes.get(self.data_offset..)?.to_vec(),
        })
    }
}

/// The header of one file of the engine's binary dump, checked against its length.
pub fn read_binary(bytes: &[u8]) -> Result<Dumped> {
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
    let data_offset = 4 * (3 + max_ndim) + name_len;
    let title = bytes
        .get(4 * (3 + max_ndim)..data_offset)
        .context("truncated title: not a file of the engine's binary io dump")?;
    let dtype = match code {
        0 => Ok(DType::F32),
        1 | QUINT8 => Ok(DType::U8),
        2 | QINT8 => Ok(DType::I8),
        3 => Ok(DType::I16),
        4 | QINT32 => Ok(DType::I32),
        9 => Ok(DType::F16),
        other => Err(other),
    };
    let quantized = match code {
        QUINT8 => Some(("quint8", true)),
        QINT32 => Some(("qint32", false)),
        QINT8 => Some(("qint8", false)),
        _ => None,
    };
    let element_size = match dtype {
        Ok(dtype) => Some(dtype.size()),
        Err(BOOL) => Some(1),
        Err(_) => None,
    };
    if let Some(size) = element_size {
        let needed = shape
            .iter()
            .try_fold(size, |bytes, &dim| bytes.checked_mul(dim))
            .context("the header's shape is too large")?;
        if bytes.len() != data_offset + needed {
            bail!(
                "shape {} of {} needs {needed} bytes after the {data_offset}-byte header, the file has {}",
                format_shape(&shape),
                match dtype {
                    Ok(dtype) => dtype.to_string(),
                    Err(_) => "bool".to_string(),
                },
                bytes.len().saturating_sub(data_offset)
            );
        }
    }
    Ok(Dumped {
        title: String::from_utf8_lossy(title).into_owned(),
        shape,
        dtype,
        quantized,
        data_offset,
    })
}

/// megdnn's parameterized dtypes (`MEGDNN_PARAMETERIZED_DTYPE_ENUM_BASE`
/// onwards): `Quantized8Asymm`, `QuantizedS32`, `QuantizedS8`.
const QUINT8: u32 = 100_000;
const QINT32: u32 = 100_001;
const QINT8: u32 = 100_002;

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
        let bytes = binary(0, &[1, 2], "var={id:3}", &data);
        let read = read_binary(&bytes).unwrap();
        assert_eq!(
            (&read.shape, read.dtype, read.title.as_str()),
            (&vec![1, 2], Ok(DType::F32), "var={id:3}")
        );
        assert_eq!(read.tensor(&bytes).unwrap().data, data);
        assert!(read_binary(&binary(0, &[1, 3], "t", &data)).is_err());
        assert_eq!(read_binary(&binary(8, &[4], "t", &[0; 4])).unwrap().dtype, Err(8));
        let mask = binary(BOOL, &[3], "mask", &[1, 0, 1]);
        let read = read_binary(&mask).unwrap();
        assert_eq!(read.dtype_name(), "bool");
        let npy = read.npy(&mask).unwrap();
        assert!(String::from_utf8_lossy(&npy).contains("'descr': '|b1'"));
        assert!(npy.ends_with(&[1, 0, 1]));
        assert!(read_binary(&binary(BOOL, &[4], "mask", &[1, 0, 1])).is_err());
        assert!(read_binary(&[1, 0, 0]).is_err());
    }
}
