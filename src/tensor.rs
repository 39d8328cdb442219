//! Host tensors: the plain data that moves between feeds, the engine and reports;
//! and views of any NumPy array's elements, which `.npy` files and comparisons read.

pub mod npy;

use std::fmt;
use std::io::{self, Write};

use anyhow::{bail, Context, Result};
use half::f16;

use crate::memory;

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
        Element::from(self).size()
    }

    /// The NumPy name, which users already know from MegEngine.
    pub fn name(self) -> &'static str {
        Element::from(self).name()
    }

    /// The type of NumPy name `name` (as `name` gives it).
    pub fn from_name(name: &str) -> Option<DType> {
        use DType::*;
        [F32, F16, I32, I16, I8, U8, U32, U16, I64]
            .into_iter()
            .find(|dtype| dtype.name() == name)
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16)
    }

    /// The smallest and the largest finite value of the type.
    pub fn range(self) -> (f64, f64) {
        match self {
            DType::F32 => (f64::from(f32::MIN), f64::from(f32::MAX)),
            DType::F16 => (f16::MIN.to_f64(), f16::MAX.to_f64()),
            DType::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
            DType::I16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
            DType::I8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
            DType::U8 => (0.0, f64::from(u8::MAX)),
            DType::U32 => (0.0, f64::from(u32::MAX)),
            DType::U16 => (0.0, f64::from(u16::MAX)),
            DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        }
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

/// The element types of NumPy arrays `mge` reads: the engine's and a few more
/// that reference data often has (`float64`, `bool`, `uint64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl Element {
    pub fn size(self) -> usize {
        match self {
            Element::Bool | Element::I8 | Element::U8 => 1,
            Element::I16 | Element::U16 | Element::F16 => 2,
            Element::I32 | Element::U32 | Element::F32 => 4,
            Element::I64 | Element::U64 | Element::F64 => 8,
        }
    }

    /// The NumPy name.
    pub fn name(self) -> &'static str {
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
            Element::F16 => "float16",
            Element::F32 => "float32",
            Element::F64 => "float64",
        }
    }

    /// One element of `size()` bytes, widened to `f64`.
    fn decode(self, bytes: &[u8], big_endian: bool) -> f64 {
        macro_rules! number {
            ($t:ty) => {{
                let bytes = bytes.try_into().unwrap();
                (if big_endian {
                    <$t>::from_be_bytes(bytes)
                } else {
                    <$t>::from_le_bytes(bytes)
                }) as f64
            }};
        }
        match self {
            Element::Bool => f64::from(u8::from(bytes[0] != 0)),
            Element::I8 => bytes[0] as i8 as f64,
            Element::U8 => bytes[0] as f64,
            Element::I16 => number!(i16),
            Element::I32 => number!(i32),
            Element::I64 => number!(i64),
            Element::U16 => number!(u16),
            Element::U32 => number!(u32),
            Element::U64 => number!(u64),
            Element::F32 => number!(f32),
            Element::F64 => number!(f64),
            Element::F16 => {
                let bytes = bytes.try_into().unwrap();
                let half = if big_endian {
                    f16::from_be_bytes(bytes)
                } else {
                    f16::from_le_bytes(bytes)
                };
                half.to_f64()
            }
        }
    }
}

impl From<DType> for Element {
    fn from(dtype: DType) -> Element {
        match dtype {
            DType::F32 => Element::F32,
            DType::F16 => Element::F16,
            DType::I32 => Element::I32,
            DType::I16 => Element::I16,
            DType::I8 => Element::I8,
            DType::U8 => Element::U8,
            DType::U32 => Element::U32,
            DType::U16 => Element::U16,
            DType::I64 => Element::I64,
        }
    }
}

/// Borrowed elements of an array in memory: a tensor of ours or the data of an
/// `.npy` file, in C or Fortran order, in either byte order.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    pub shape: &'a [usize],
    pub element: Element,
    /// Exactly `len() * element.size()` bytes.
    pub data: &'a [u8],
    pub fortran: bool,
    pub big_endian: bool,
    /// A quantized tensor's stored integers read as the real numbers they mean.
    pub real: Option<Dequantize>,
}

/// How a quantized dtype's stored value `v` is read: `(v - zero_point) * scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dequantize {
    pub scale: f64,
    pub zero_point: f64,
}

impl<'a> TensorView<'a> {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Every element widened to `f64`, in logical (C) order whatever the memory order.
    pub fn values(self) -> Values<'a> {
        let fortran_strides = (self.fortran && self.shape.len() > 1).then(|| {
            let mut strides = Vec::with_capacity(self.shape.len());
            let mut stride = 1;
            for &dim in self.shape {
                strides.push(stride);
                stride *= dim;
            }
            strides
        });
        Values {
            view: self,
            next: 0,
            len: self.len(),
            fortran_strides,
        }
    }
}

/// The iterator of `TensorView::values`.
pub struct Values<'a> {
    view: TensorView<'a>,
    next: usize,
    len: usize,
    /// Element strides of each dimension, for a Fortran-ordered view.
    fortran_strides: Option<Vec<usize>>,
}

impl Iterator for Values<'_> {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        if self.next >= self.len {
            return None;
        }
        let index = self.next;
        self.next += 1;
        let position = match &self.fortran_strides {
            None => index,
            Some(strides) => {
                // The C-order index unravelled, then placed with Fortran strides.
                let (mut rest, mut position) = (index, 0);
                for (&dim, &stride) in self.view.shape.iter().zip(strides).rev() {
                    position += (rest % dim) * stride;
                    rest /= dim;
                }
                position
            }
        };
        let size = self.view.element.size();
        let bytes = &self.view.data[position * size..(position + 1) * size];
        let stored = self.view.element.decode(bytes, self.view.big_endian);
        Some(match self.view.real {
            Some(real) => (stored - real.zero_point) * real.scale,
            None => stored,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.len - self.next;
        (left, Some(left))
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

/// How many values of a tensor are NaN, and how many infinite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonFinite {
    pub nan: usize,
    pub inf: usize,
    /// Of how many values.
    pub of: usize,
}

impl NonFinite {
    pub fn any(&self) -> bool {
        self.nan + self.inf > 0
    }
}

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |count: usize, one: &str, many: &str| match count {
            1 => format!("1 {one}"),
            _ => format!("{count} {many}"),
        };
        let parts: Vec<String> = [(self.nan, "NaN", "NaN"), (self.inf, "infinity", "infinities")]
            .into_iter()
            .filter(|(count, _, _)| *count > 0)
            .map(|(count, one, many)| plural(count, one, many))
            .collect();
        write!(f, "{} among {} values", parts.join(" and "), self.of)
    }
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
    /// Its memory is asked for before the values are made (see `memory`).
    pub fn from_f64(shape: Vec<usize>, dtype: DType, values: impl IntoIterator<Item = f64>) -> Result<Self> {
        let (count, bytes) = shape
            .iter()
            .try_fold(1usize, |count, &dim| count.checked_mul(dim))
            .and_then(|count| Some((count, count.checked_mul(dtype.size())?)))
            .with_context(|| {
                format!(
                    "shape {} of {dtype} holds more bytes than memory can",
                    format_shape(&shape)
                )
            })?;
        let mut data = memory::with_capacity(bytes, &format!("a tensor of shape {}", format_shape(&shape)))?;
        let mut written = 0usize;
        let mut values = values.into_iter();
        // No more than the room made: a value past the shape would grow it.
        for value in values.by_ref().take(count) {
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
        if values.next().is_some() {
            bail!("more values than shape {} holds", format_shape(&shape));
        }
        Ok(HostTensor { shape, dtype, data })
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Its NaN and infinite values (none, for an integer type).
    pub fn non_finite(&self) -> NonFinite {
        let mut counted = NonFinite {
            of: self.len(),
            ..NonFinite::default()
        };
        if self.dtype.is_float() {
            for value in self.values() {
                counted.nan += usize::from(value.is_nan());
                counted.inf += usize::from(value.is_infinite());
            }
        }
        counted
    }

    /// Every element widened to `f64`, in C order.
    pub fn values(&self) -> Values<'_> {
        self.view().values()
    }

    /// The tensor's elements as read-only data, for code that also reads `.npy` files.
    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            shape: &self.shape,
            element: Element::from(self.dtype),
            data: &self.data,
            fortran: false,
            big_endian: cfg!(target_endian = "big"),
            real: None,
        }
    }

    /// The tensor as a version 1.0 `.npy` file. Written here rather than through
    /// ndarray-npy because that needs a typed array and has no float16.
    pub fn to_npy(&self) -> Vec<u8> {
        let mut bytes = self.npy_header();
        bytes.extend(&self.data);
        bytes
    }

    /// `to_npy` written to `out` without a copy of the values.
    pub fn write_npy(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.npy_header())?;
        out.write_all(&self.data)
    }

    fn npy_header(&self) -> Vec<u8> {
        npy_header(self.dtype.npy_descr(), &self.shape)
    }
}

/// Bool values (a byte each, 0 or 1: megdnn's and NumPy's bool) as a `.npy` file;
/// the engine computes bools (masks) but takes none in or out.
pub fn bool_npy(shape: &[usize], data: &[u8]) -> Vec<u8> {
    let mut bytes = npy_header("|b1", shape);
    bytes.extend(data);
    bytes
}

/// A version 1.0 `.npy` header for C-ordered values of type `descr`.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}",
        format_shape(shape)
    );
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes
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
    fn counts_non_finite_values() {
        let t = HostTensor::from_f64(vec![5], DType::F16, [f64::NAN, f64::INFINITY, -1e6, 1.0, f64::NAN]).unwrap();
        let counted = t.non_finite();
        assert_eq!(
            (counted.nan, counted.inf, counted.of),
            (2, 2, 5),
            "-1e6 overflows float16"
        );
        assert_eq!(counted.to_string(), "2 NaN and 2 infinities among 5 values");
        let ints = HostTensor::from_f64(vec![2], DType::I32, [1.0, 2.0]).unwrap();
        assert!(!ints.non_finite().any());
        let one = NonFinite { nan: 0, inf: 1, of: 4 };
        assert_eq!(one.to_string(), "1 infinity among 4 values");
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
