//! Host tensors: the plain data that moves between feeds, the engine and reports.

use std::fmt;

use anyhow::{bail, Result};
use half::f16;

/// Element types the Lite runtime knows (its `LiteDataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32,
    F16,
    I32,
    I16,
    I8,
    U8,
    U32,
    U16,
    I64,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::I64 => 8,
        }
    }

    /// The NumPy name, which users already know from MegEngine.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F16 => "float16",
            DType::I32 => "int32",
            DType::I16 => "int16",
            DType::I8 => "int8",
            DType::U8 => "uint8",
            DType::U32 => "uint32",
            DType::U16 => "uint16",
            DType::I64 => "int64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16)
    }

    /// The `.npy` type string, e.g. `<f4`.
    fn npy_descr(self) -> &'static str {
        match self {
            DType::F32 => "<f4",
            DType::F16 => "<f2",
            DType::I32 => "<i4",
            DType::I16 => "<i2",
            DType::I8 => "|i1",
            DType::U8 => "|u1",
            DType::U32 => "<u4",
            DType::U16 => "<u2",
            DType::I64 => "<i8",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a model declares for one of its inputs or outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

/// A dense, C-ordered tensor in host memory, elements in native byte order.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub data: Vec<u8>,
}

/// Formats a shape the way NumPy users read it: `(1, 3, 224, 224)`.
pub fn format_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", dims.join(", "))
        }
    }
}

impl HostTensor {
    /// Builds a tensor of `dtype` from values, converting like NumPy's `astype`
    /// (floats to integers truncate toward zero; out-of-range values saturate).
    pub fn from_f64(shape: Vec<usize>, dtype: DType, values: impl IntoIterator<Item = f64>) -> Result<Self> {
        let count: usize = shape.iter().product();
        let mut data = Vec::with_capacity(count * dtype.size());
        let mut written = 0usize;
        for value in values {
            match dtype {
                DType::F32 => data.extend_from_slice(&(value as f32).to_ne_bytes()),
                DType::F16 => data.extend_from_slice(&f16::from_f64(value).to_ne_bytes()),
                DType::I32 => data.extend_from_slice(&(value as i32).to_ne_bytes()),
                DType::I16 => data.extend_from_slice(&(value as i16).to_ne_bytes()),
                DType::I8 => data.extend_from_slice(&(value as i8).to_ne_bytes()),
                DType::U8 => data.push(value as u8),
                DType::U32 => data.extend_from_slice(&(value as u32).to_ne_bytes()),
                DType::U16 => data.extend_from_slice(&(value as u16).to_ne_bytes()),
                DType::I64 => data.extend_from_slice(&(value as i64).to_ne_bytes()),
            }
            written += 1;
        }
        if written != count {
            bail!("{written} values do not fill shape {}", format_shape(&shape));
        }
        Ok(HostTensor { shape, dtype, data })
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Every element widened to `f64`, in C order.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        let dtype = self.dtype;
        self.data.chunks_exact(dtype.size()).map(move |b| match dtype {
            DType::F32 => f32::from_ne_bytes(b.try_into().unwrap()) as f64,
            DType::F16 => f16::from_ne_bytes(b.try_into().unwrap()).to_f64(),
            DType::I32 => i32::from_ne_bytes(b.try_into().unwrap()) as f64,
            DType::I16 => i16::from_ne_bytes(b.try_into().unwrap()) as f64,
            DType::I8 => b[0] as i8 as f64,
            DType::U8 => b[0] as f64,
            DType::U32 => u32::from_ne_bytes(b.try_into().unwrap()) as f64,
            DType::U16 => u16::from_ne_bytes(b.try_into().unwrap()) as f64,
            DType::I64 => i64::from_ne_bytes(b.try_into().unwrap()) as f64,
        })
    }

    /// The tensor as a version 1.0 `.npy` file. Written here rather than through
    /// ndarray-npy because that needs a typed array and has no float16.
    pub fn to_npy(&self) -> Vec<u8> {
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
            self.dtype.npy_descr(),
            format_shape(&self.shape)
        );
        // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
        let unpadded = 10 + header.len() + 1;
        header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend(&self.data);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_like_numpy_astype() {
        let t = HostTensor::from_f64(vec![4], DType::F32, [1.9, -1.9, 300.0, 0.5]).unwrap();
        let as_int: Vec<f64> = HostTensor::from_f64(vec![4], DType::I32, t.values())
            .unwrap()
            .values()
            .collect();
        assert_eq!(as_int, [1.0, -1.0, 300.0, 0.0]);
        let as_u8: Vec<f64> = HostTensor::from_f64(vec![4], DType::U8, t.values())
            .unwrap()
            .values()
            .collect();
        assert_eq!(as_u8, [1.0, 0.0, 255.0, 0.0]);
    }

    #[test]
    fn rejects_values_that_do_not_fill_the_shape() {
        assert!(HostTensor::from_f64(vec![2, 2], DType::F32, [1.0; 3]).is_err());
    }

    #[test]
    fn writes_npy_headers_numpy_reads() {
        let t = HostTensor::from_f64(vec![2, 3], DType::U8, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let npy = t.to_npy();
        assert_eq!(&npy[..8], b"\x93NUMPY\x01\x00");
        let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&npy[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }"));
        assert_eq!(&npy[10 + header_len..], &[1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn formats_shapes_like_numpy() {
        assert_eq!(format_shape(&[1, 3]), "(1, 3)");
        assert_eq!(format_shape(&[5]), "(5,)");
        assert_eq!(format_shape(&[]), "()");
    }
}
