//! The `[NAME:]SOURCE` grammar: which input a spec names and what kind of source it gives.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use serde_json::Value;

use super::random::RandomSpec;
use super::{feed_element_count, image, input_list, json, npy, FeedOptions};
use crate::tensor::{HostTensor, TensorInfo};

/// One parsed `[NAME:]SOURCE`.
pub(super) struct Spec<'a> {
    /// Index of the named input, if the spec names one.
    pub input: Option<usize>,
    pub source_text: &'a str,
    pub source: Source,
}

pub(super) enum Source {
    Random(RandomSpec),
    Npy(PathBuf),
    Npz { path: PathBuf, key: Option<String> },
    Image(PathBuf),
    Json(Value),
}

impl<'a> Spec<'a> {
    pub fn parse(text: &'a str, inputs: &[TensorInfo]) -> Result<Self> {
        if text.trim().is_empty() {
            bail!("empty input spec");
        }
        let (input, source_text) = split_name(text, inputs)?;
        // Name the input in errors whenever it is known, even if implied.
        let known_input = input.or((inputs.len() == 1).then_some(0));
        let context = |err: anyhow::Error| match known_input {
            Some(index) => anyhow!("input '{}': {err:#}", inputs[index].name),
            None => err,
        };
        if source_text.trim().is_empty() {
            return Err(context(anyhow!("no source after the input name in '{text}'")));
        }
        let source = Source::parse(source_text).map_err(context)?;
        Ok(Spec {
            input,
            source_text,
            source,
        })
    }
}

/// Splits off `NAME:` when the spec starts with an input's name (the longest one, since names
/// may contain `:`), and rejects what looks like a name but is none of the model's.
fn split_name<'a>(text: &'a str, inputs: &[TensorInfo]) -> Result<(Option<usize>, &'a str)> {
    let named = inputs
        .iter()
        .enumerate()
        .filter_map(|(index, info)| {
            let source = text.strip_prefix(info.name.as_str())?.strip_prefix(':')?;
            Some((info.name.len(), index, source))
        })
        .max_by_key(|&(name_len, _, _)| name_len);
    if let Some((_, index, source)) = named {
        return Ok((Some(index), source));
    }
    if let Some((prefix, _)) = text.split_once(':') {
        if looks_like_name(prefix) {
            bail!(
                "unknown input '{prefix}' in '{text}': the model's inputs are {}",
                input_list(inputs)
            );
        }
    }
    Ok((None, text))
}

/// Whether text before a `:` is meant as an input name rather than part of a path or literal.
fn looks_like_name(prefix: &str) -> bool {
    let starts_like_source = prefix.starts_with(['#', '[', '-']) || prefix.starts_with(|c: char| c.is_ascii_digit());
    !prefix.is_empty() && !prefix.contains(['/', '.']) && !starts_like_source
}

/// The files `text` (a `[NAME:]SOURCE`) may read, told without the model's
/// inputs: what the whole of it names as a source, and what the text after
/// each `:` does.
pub(super) fn named_files(text: &str) -> Vec<PathBuf> {
    let after_colons = text.match_indices(':').map(|(at, _)| &text[at + 1..]);
    std::iter::once(text)
        .chain(after_colons)
        .filter_map(|source| match Source::parse(source).ok()? {
            Source::Npy(path) | Source::Image(path) | Source::Npz { path, .. } => Some(path),
            Source::Random(_) | Source::Json(_) => None,
        })
        .collect()
}

const IMAGE_EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "bmp", "ppm", "pgm"];

impl Source {
    fn parse(text: &str) -> Result<Self> {
        if text.starts_with("#rand") {
            return RandomSpec::parse(text).map(Source::Random);
        }
        if text.starts_with('[') {
            return serde_json::from_str(text)
                .map(Source::Json)
                .map_err(|err| anyhow!("invalid JSON literal '{text}': {err}"));
        }
        if let Ok(number @ Value::Number(_)) = serde_json::from_str(text) {
            return Ok(Source::Json(number));
        }
        // ASCII lowercasing keeps byte offsets, so positions found in `lower` index `text`.
        let lower = text.to_ascii_lowercase();
        if let Some(at) = lower.rfind(".npz:") {
            let key = &text[at + ".npz:".len()..];
            if key.is_empty() {
                bail!("no array key after ':' in '{text}'");
            }
            let path = PathBuf::from(&text[..at + ".npz".len()]);
            return Ok(Source::Npz {
                path,
                key: Some(key.to_string()),
            });
        }
        let extension = Path::new(&lower).extension().and_then(|ext| ext.to_str()).unwrap_or("");
        let path = PathBuf::from(text);
        match extension {
            "npy" => Ok(Source::Npy(path)),
            "npz" => Ok(Source::Npz { path, key: None }),
            ext if IMAGE_EXTENSIONS.contains(&ext) => Ok(Source::Image(path)),
            _ => bail!(
                "can't tell what '{text}' is: expected #rand(MIN,MAX[,SHAPE]), a .npy/.npz file, \
                 an image (png, jpg, bmp, ppm, pgm) or a JSON literal"
            ),
        }
    }

    /// The values, and for a file, the NumPy dtype it stores them in.
    pub fn load(&self, info: &TensorInfo, options: &FeedOptions) -> Result<(HostTensor, Option<&'static str>)> {
        let fits = |shape: &[usize]| feed_element_count(shape, info).map(drop);
        let stored = |(tensor, dtype)| (tensor, Some(dtype));
        match self {
            Source::Random(spec) => spec.generate(info, options.seed).map(|tensor| (tensor, None)),
            Source::Npy(path) => npy::load_npy_checked(path, info.dtype, &fits).map(stored),
            Source::Npz { path, key } => npy::load_npz(path, key.as_deref(), info, &fits).map(stored),
            Source::Image(path) => image::load(path, info, options.resize_input).map(|tensor| (tensor, None)),
            Source::Json(value) => json::to_tensor(value, info).map(|tensor| (tensor, None)),
        }
    }
}
