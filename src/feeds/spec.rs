//! The `[NAME:]SOURCE` grammar: a spec parsed once into every way it reads,
//! and the reading the model's inputs choose.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use serde_json::Value;

use super::random::RandomSpec;
use super::{feed_element_count, image, input_list, json, npy, FeedOptions};
use crate::tensor::{HostTensor, TensorInfo};

/// One `[NAME:]SOURCE`, parsed once, before the model's inputs are known.
/// An input's name may hold `:`, so the text is read every way it can be:
/// as `NAME:SOURCE` at each of its `:`, and whole as a SOURCE that names no
/// input. The model's inputs choose the reading (`FeedSpec::reading`); the
/// files a spec may read are those of any reading (`FeedSpec::files`).
pub struct FeedSpec {
    text: String,
    /// `NAME:SOURCE` at each `:` of the text, in order: where NAME ends, and
    /// SOURCE read (its error kept for the reading that is chosen).
    named: Vec<(usize, Result<FeedSource>)>,
    /// The whole text read as a SOURCE; `None` for a spec made for an input.
    whole: Option<Result<FeedSource>>,
}

/// The reading of a spec that the model's inputs chose.
#[derive(Clone)]
pub(super) struct Reading<'a> {
    /// Index of the named input, if the spec names one.
    pub input: Option<usize>,
    pub source_text: &'a str,
    pub source: &'a FeedSource,
}

#[derive(Clone)]
pub(super) enum FeedSource {
    Random(RandomSpec),
    Npy(PathBuf),
    Npz { path: PathBuf, key: Option<String> },
    Image(PathBuf),
    Json(Value),
}

impl FeedSpec {
    /// Every reading of `text`; an error in one is told only if the model's inputs choose it.
    pub fn parse(text: &str) -> FeedSpec {
        let named = text
            .match_indices(':')
            .map(|(at, _)| (at, FeedSource::parse(&text[at + 1..])))
            .collect();
        FeedSpec {
            text: text.to_string(),
            named,
            whole: Some(FeedSource::parse(text)),
        }
    }

    /// `NAME:SOURCE` for the input `name`, made rather than read: `source`,
    /// written `source_text`.
    pub(super) fn for_input(name: &str, source_text: &str, source: FeedSource) -> FeedSpec {
        FeedSpec {
            text: format!("{name}:{source_text}"),
            named: vec![(name.len(), Ok(source))],
            whole: None,
        }
    }

    /// The spec as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The files the spec may read: those its readings name (the whole text
    /// first), told before the model's inputs are known.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.whole
            .iter()
            .chain(self.named.iter().map(|(_, source)| source))
            .filter_map(|source| match source.as_ref().ok()? {
                FeedSource::Npy(path) | FeedSource::Image(path) | FeedSource::Npz { path, .. } => Some(path.as_path()),
                FeedSource::Random(_) | FeedSource::Json(_) => None,
            })
    }

    /// The reading `inputs` choose: `NAME:` when the spec starts with an
    /// input's name (the longest one, since names may contain `:`), else the
    /// whole text, unless what stands before its first `:` looks like a name
    /// but is none of the model's.
    pub(super) fn reading(&self, inputs: &[TensorInfo]) -> Result<Reading<'_>> {
        let text = self.text.as_str();
        if text.trim().is_empty() {
            bail!("empty input spec");
        }
        // The longest NAME that is an input's (the last input of that name, should two share it).
        let named = self.named.iter().rev().find_map(|(at, source)| {
            let index = inputs.iter().rposition(|input| input.name == text[..*at])?;
            Some((Some(index), &text[at + 1..], source))
        });
        let (input, source_text, source) = match named {
            Some(named) => named,
            None => {
                if let Some((prefix, _)) = text.split_once(':').filter(|(prefix, _)| looks_like_name(prefix)) {
                    bail!(
                        "unknown input '{prefix}' in '{text}': the model's inputs are {}",
                        input_list(inputs)
                    );
                }
                let whole = self
                    .whole
                    .as_ref()
                    .ok_or_else(|| anyhow!("'{text}' names no input of the model"))?;
                (None, text, whole)
            }
        };
        // Name the input in errors whenever it is known, even if implied.
        let known_input = input.or((inputs.len() == 1).then_some(0));
        let context = |err: &anyhow::Error| match known_input {
            Some(index) => anyhow!("input '{}': {err:#}", inputs[index].name),
            None => anyhow!("{err:#}"),
        };
        if source_text.trim().is_empty() {
            return Err(context(&anyhow!("no source after the input name in '{text}'")));
        }
        let source = source.as_ref().map_err(context)?;
        Ok(Reading {
            input,
            source_text,
            source,
        })
    }
}

/// Whether text before a `:` is meant as an input name rather than part of a path or literal.
fn looks_like_name(prefix: &str) -> bool {
    let starts_like_source = prefix.starts_with(['#', '[', '-']) || prefix.starts_with(|c: char| c.is_ascii_digit());
    !prefix.is_empty() && !prefix.contains(['/', '.']) && !starts_like_source
}

const IMAGE_EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "bmp", "ppm", "pgm"];

impl FeedSource {
    fn parse(text: &str) -> Result<Self> {
        if text.starts_with("#rand") {
            return RandomSpec::parse(text).map(FeedSource::Random);
        }
        if text.starts_with('[') {
            return serde_json::from_str(text)
                .map(FeedSource::Json)
                .map_err(|err| anyhow!("invalid JSON literal '{text}': {err}"));
        }
        if let Ok(number @ Value::Number(_)) = serde_json::from_str(text) {
            return Ok(FeedSource::Json(number));
        }
        // ASCII lowercasing keeps byte offsets, so positions found in `lower` index `text`.
        let lower = text.to_ascii_lowercase();
        if let Some(at) = lower.rfind(".npz:") {
            let key = &text[at + ".npz:".len()..];
            if key.is_empty() {
                bail!("no array key after ':' in '{text}'");
            }
            let path = PathBuf::from(&text[..at + ".npz".len()]);
            return Ok(FeedSource::Npz {
                path,
                key: Some(key.to_string()),
            });
        }
        let extension = Path::new(&lower).extension().and_then(|ext| ext.to_str()).unwrap_or("");
        let path = PathBuf::from(text);
        match extension {
            "npy" => Ok(FeedSource::Npy(path)),
            "npz" => Ok(FeedSource::Npz { path, key: None }),
            ext if IMAGE_EXTENSIONS.contains(&ext) => Ok(FeedSource::Image(path)),
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
            FeedSource::Random(spec) => spec.generate(info, options.seed).map(|tensor| (tensor, None)),
            FeedSource::Npy(path) => npy::load_npy_checked(path, info.dtype, &fits).map(stored),
            FeedSource::Npz { path, key } => npy::load_npz(path, key.as_deref(), info, &fits).map(stored),
            FeedSource::Image(path) => {
                let sizing = match options.resize_input {
                    true => image::Sizing::Resized,
                    false => image::Sizing::Own(&fits),
                };
                image::load(path, info, sizing).map(|tensor| (tensor, None))
            }
            FeedSource::Json(value) => json::to_tensor(value, info).map(|tensor| (tensor, None)),
        }
    }
}
