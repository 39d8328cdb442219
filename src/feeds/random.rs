//! `#rand(MIN,MAX[,D0,D1,...][,...])`: seeded uniform random values, as in `trace.dump`.

use anyhow::{anyhow, bail, Result};

use super::feed_element_count;
use crate::tensor::{format_shape, HostTensor, TensorInfo};

#[derive(Clone)]
pub(super) struct RandomSpec {
    min: f64,
    max: f64,
    /// Explicit leading dimensions; `None` takes the input's declared shape.
    dims: Option<Vec<usize>>,
    /// A trailing `...`: the dimensions after `dims` come from the declared shape.
    rest_from_input: bool,
}

impl RandomSpec {
    /// `#rand(MIN,MAX)`: values from `min` to `max` in the input's declared shape.
    pub fn uniform(min: f64, max: f64) -> RandomSpec {
        RandomSpec {
            min,
            max,
            dims: None,
            rest_from_input: false,
        }
    }

    /// MIN and MAX as the spec is written again, for a spec that gives no shape.
    pub fn bounds_alone(&self) -> Option<(String, String)> {
        self.dims.is_none().then(|| (short(self.min), short(self.max)))
    }

    pub fn parse(text: &str) -> Result<Self> {
        let bad = |what: String| anyhow!("bad spec '{text}': {what}; expected #rand(MIN,MAX[,D0,D1,...][,...])");
        let args = text
            .strip_prefix("#rand(")
            .and_then(|rest| rest.strip_suffix(')'))
            .ok_or_else(|| bad("not of the form #rand(...)".into()))?;
        let args: Vec<&str> = args.split(',').map(str::trim).collect();
        let [min, max, shape @ ..] = args.as_slice() else {
            return Err(bad("MIN and MAX are required".into()));
        };
        let bound = |arg: &str, which: &str| -> Result<f64> {
            arg.parse::<f64>()
                .ok()
                .filter(|value| value.is_finite())
                .ok_or_else(|| bad(format!("{which} '{arg}' is not a finite number")))
        };
        let (min, max) = (bound(min, "MIN")?, bound(max, "MAX")?);
        if min > max {
            return Err(bad(format!("MIN {min} is greater than MAX {max}")));
        }
        let (shape, rest_from_input) = match shape {
            [dims @ .., "..."] => (dims, true),
            dims => (dims, false),
        };
        let dims = shape
            .iter()
            .map(|dim| {
                dim.parse::<usize>()
                    .ok()
                    .filter(|&dim| dim > 0)
                    .ok_or_else(|| bad(format!("dimension '{dim}' is not a positive integer")))
            })
            .collect::<Result<Vec<usize>>>()?;
        let dims = (!dims.is_empty() || rest_from_input).then_some(dims);
        Ok(RandomSpec {
            min,
            max,
            dims,
            rest_from_input,
        })
    }

    /// Draws the values; the stream depends on the seed and the input's name only, so the order
    /// of the specs does not change them.
    pub fn generate(&self, info: &TensorInfo, seed: u64) -> Result<HostTensor> {
        // Converted to the dtype, values outside it would saturate (integers) or overflow to inf.
        let (lowest, highest) = info.dtype.range();
        if self.min < lowest || self.max > highest {
            bail!(
                "values from {} to {} do not fit {}, which holds {} to {}: narrow the range",
                short(self.min),
                short(self.max),
                info.dtype,
                short(lowest),
                short(highest)
            );
        }
        let shape = match &self.dims {
            None => info.shape.clone(),
            Some(dims) if self.rest_from_input => {
                if dims.len() > info.shape.len() {
                    bail!(
                        "{} dimensions before '...' but the input's shape {} has only {}",
                        dims.len(),
                        format_shape(&info.shape),
                        info.shape.len()
                    );
                }
                [dims.as_slice(), &info.shape[dims.len()..]].concat()
            }
            Some(dims) => dims.clone(),
        };
        let count = feed_element_count(&shape, info)?;
        let mut rng = SplitMix64::for_input(seed, &info.name);
        let span = self.max - self.min;
        let values = (0..count).map(|_| self.min + span * rng.next_unit());
        HostTensor::from_f64(shape, info.dtype, values)
    }
}

/// A bound of a dtype, readable: `255`, `3.4028234663852886e38`.
fn short(value: f64) -> String {
    if value.abs() >= 1e10 {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and good enough for test inputs.
struct SplitMix64(u64);

impl SplitMix64 {
    fn for_input(seed: u64, name: &str) -> Self {
        // FNV-1a of the name, mixed with the scrambled seed.
        let name_hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
        });
        SplitMix64(SplitMix64(seed).next_u64() ^ name_hash)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
