//! Input feeds: the `-i/--input SPEC` grammar and the loaders behind it.
//!
//! Mirrors the feeds of MegEngine's `trace.dump` (`_make_feed` in
//! `megengine/jit/tracing.py`): `#rand(...)`, `.npy`, images laid out like
//! OpenCV reads them, plus `.npz` archives and JSON literals.

mod image;
mod jpeg;
mod json;
mod npy;
mod random;
mod spec;
mod swept;

pub use npy::{load_npy, load_npz_array};

use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::input_files;
use crate::tensor::{format_shape, DType, HostTensor, TensorInfo};
use crate::text::quoted_list;
use random::RandomSpec;
pub use spec::FeedSpec;
use spec::{FeedSource, Reading};
pub use swept::{at_shapes, ShapedFeed};

pub struct FeedOptions {
    pub seed: u64,
    pub resize_input: bool,
}

/// One resolved input: `source` is the SOURCE text as the user wrote it (for reports/errors).
#[derive(Clone, Debug)]
pub struct Feed {
    pub name: String,
    pub source: String,
    /// The dtype the source stores, when its values were converted to the input's.
    pub converted_from: Option<&'static str>,
    pub tensor: HostTensor,
}

/// Each SPEC of the `-i` arguments `args`, parsed once (see `expand_specs`).
pub fn parse_specs(args: &[String]) -> Result<Vec<FeedSpec>> {
    Ok(expand_specs(args)?.iter().map(|text| FeedSpec::parse(text)).collect())
}

/// Splits each `-i` argument on `;` and expands `@FILE` (one SPEC per non-empty line; an
/// @FILE's lines may not themselves be @FILE). Each SPEC is trimmed of surrounding whitespace.
/// Returns raw `[NAME:]SOURCE` strings.
fn expand_specs(args: &[String]) -> Result<Vec<String>> {
    let mut specs = Vec::new();
    for arg in args {
        for piece in arg.split(';').map(str::trim) {
            match piece.strip_prefix('@') {
                Some(path) => specs.extend(read_spec_file(path)?),
                None => specs.push(piece.to_string()),
            }
        }
    }
    Ok(specs)
}

/// Reads an `@FILE`. A line may hold several `;`-joined specs, as in MegEngine's own `@file`.
fn read_spec_file(path: &str) -> Result<Vec<String>> {
    let text = input_files::read_text(Path::new(path), &input_files::SPEC_LIST)?;
    let mut specs = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        for piece in line.split(';').map(str::trim) {
            if piece.starts_with('@') {
                bail!(
                    "spec file '{path}', line {}: '{piece}' cannot include another spec file",
                    index + 1
                );
            }
            specs.push(piece.to_string());
        }
    }
    Ok(specs)
}

/// Matches specs to the model's inputs and loads them, returning one Feed per input that a spec
/// covers, in the model's input order. Values are converted to each input's dtype.
pub fn resolve(specs: &[FeedSpec], inputs: &[TensorInfo], options: &FeedOptions) -> Result<Vec<Feed>> {
    let mut feeds: Vec<Option<Feed>> = vec![None; inputs.len()];
    for spec in specs {
        let spec = spec.reading(inputs)?;
        for index in targets(&spec, specs.len(), inputs)? {
            let info = &inputs[index];
            if let Some(previous) = &feeds[index] {
                bail!(
                    "input '{}' is fed twice: from '{}' and from '{}'",
                    info.name,
                    previous.source,
                    spec.source_text
                );
            }
            let (tensor, stored) = spec
                .source
                .load(info, options)
                .and_then(|(tensor, stored)| Ok((has_values(tensor, info)?, stored)))
                .map_err(|err| anyhow!("input '{}' from '{}': {err:#}", info.name, spec.source_text))?;
            feeds[index] = Some(Feed {
                name: info.name.clone(),
                source: spec.source_text.to_string(),
                converted_from: stored.filter(|stored| *stored != info.dtype.name()),
                tensor,
            });
        }
    }
    Ok(feeds.into_iter().flatten().collect())
}

/// The engine takes neither a 0-d tensor (for an input that has dimensions) nor an empty one.
fn has_values(tensor: HostTensor, input: &TensorInfo) -> Result<HostTensor> {
    if tensor.shape.is_empty() && !input.shape.is_empty() {
        bail!("a 0-d array holds one value but has no shape: give it a shape, or write the value as a JSON number to fill the input");
    }
    if tensor.data.is_empty() {
        bail!("shape {} holds no values", format_shape(&tensor.shape));
    }
    Ok(tensor)
}

/// The feed of an input the user gives none: `NAME:#rand(0,1)` for a float
/// input, `NAME:#rand(0,255)` for an integer one (`#rand(0,127)` for int8,
/// which holds no more).
pub fn default_spec(input: &TensorInfo) -> FeedSpec {
    let max = default_max(input.dtype);
    let source = FeedSource::Random(RandomSpec::uniform(0.0, max));
    FeedSpec::for_input(&input.name, &format!("#rand(0,{max})"), source)
}

/// `NAME:SOURCE`, the spec that feeds input `name` from `source`; `SOURCE`
/// alone for a model's only input (`alone`) whose name a spec cannot carry
/// (`;` splits specs, `@` starts a list, blanks around it are trimmed).
pub fn named_spec(name: &str, source: &str, alone: bool) -> String {
    let spec_safe = !name.contains(';') && !name.starts_with('@') && name.trim() == name && !name.is_empty();
    match spec_safe || !alone {
        true => format!("{name}:{source}"),
        false => source.to_string(),
    }
}

/// The largest value of the default `#rand` of an input of `dtype`.
fn default_max(dtype: DType) -> f64 {
    match dtype.is_float() {
        true => 1.0,
        false => dtype.range().1.min(255.0),
    }
}

/// The inputs a spec feeds: the named one, else the only one, else what the source implies.
fn targets(spec: &Reading, spec_count: usize, inputs: &[TensorInfo]) -> Result<Vec<usize>> {
    if let Some(index) = spec.input {
        return Ok(vec![index]);
    }
    if inputs.is_empty() {
        bail!("cannot feed '{}': the model has no inputs", spec.source_text);
    }
    if inputs.len() == 1 {
        return Ok(vec![0]);
    }
    match &spec.source {
        FeedSource::Npz { path, key: None } => {
            let keys = crate::tensor::npy::Npz::open(path)
                .map_err(|err| anyhow!("cannot feed '{}': {err:#}", spec.source_text))?
                .keys();
            let matched: Vec<usize> = (0..inputs.len())
                .filter(|&index| keys.contains(&inputs[index].name))
                .collect();
            if matched.is_empty() {
                bail!(
                    "'{}' has no array named after an input of the model: its keys are {}, the model's inputs are {}",
                    spec.source_text,
                    quoted_list(&keys),
                    input_list(inputs)
                );
            }
            Ok(matched)
        }
        // A lone unnamed `#rand` feeds every input, as in `trace.dump`.
        FeedSource::Random(_) if spec_count == 1 => Ok((0..inputs.len()).collect()),
        _ => bail!(
            "'{}' names no input, but the model has several inputs ({}): write NAME:SOURCE",
            spec.source_text,
            input_list(inputs)
        ),
    }
}

fn input_list(inputs: &[TensorInfo]) -> String {
    quoted_list(inputs.iter().map(|info| &info.name))
}

/// Largest tensor a feed may have: a typo in a shape must be an error, not an abort on a
/// failed allocation.
const MAX_TENSOR_BYTES: usize = 1 << 32;

/// How many times the elements of the input's declared shape a feed may hold. Models accept
/// other shapes than the one they were dumped with (a batch of 32 for a declared 1, an image
/// of 4x the height and width), so the limit is generous; it is there so that a wrong shape
/// or a lying file header is an error in a second rather than gigabytes allocated and filled
/// before the engine refuses the shape.
const FEED_GROWTH: usize = 64;
/// Below this size any feed is fine, whatever the declared shape (an input declared with
/// dynamic, zero-sized dimensions declares no size).
const FEED_FLOOR_BYTES: usize = 16 << 20;

/// Element count of `shape`, refusing shapes whose data would not fit in memory.
fn checked_element_count(shape: &[usize], dtype: DType) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |count, &dim| count.checked_mul(dim))
        .filter(|count| {
            count
                .checked_mul(dtype.size())
                .is_some_and(|bytes| bytes <= MAX_TENSOR_BYTES)
        })
        .ok_or_else(|| {
            anyhow!(
                "shape {} of {dtype} is too large (more than {} GiB)",
                format_shape(shape),
                MAX_TENSOR_BYTES >> 30
            )
        })
}

/// Element count of a feed of `shape` for `input`, refusing one far larger than the input
/// (see `FEED_GROWTH`) before its values are made or read.
fn feed_element_count(shape: &[usize], input: &TensorInfo) -> Result<usize> {
    let count = checked_element_count(shape, input.dtype)?;
    let declared: usize = input.shape.iter().product();
    let limit = declared
        .saturating_mul(FEED_GROWTH)
        .max(FEED_FLOOR_BYTES / input.dtype.size());
    if count > limit {
        bail!(
            "shape {} has {count} elements, more than {FEED_GROWTH} times the {declared} of the input's declared shape {}",
            format_shape(shape),
            format_shape(&input.shape)
        );
    }
    Ok(count)
}

#[cfg(test)]
mod tests;
