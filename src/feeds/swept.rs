//! A sweep's feeds (`run --sweep`): each input's feed at one of the shapes
//! the sweep gives it. `#rand` takes the shape, an image is resized to it
//! (and repeated along a batch), a file or a literal feeds the shape it holds
//! only; inputs the sweep leaves alone keep their feed.

use anyhow::{bail, Result};

use super::spec::{Reading, Source};
use super::{default_max, image, targets, FeedOptions, FeedSpec};
use crate::tensor::{format_shape, HostTensor, TensorInfo};

/// How an input is fed at one shape of a sweep.
#[derive(Debug, PartialEq)]
pub enum ShapedFeed {
    /// `-i SPEC` for the run.
    Spec(String),
    /// Values made here (an image laid out at the shape), for the caller to
    /// write to a file the run reads.
    Values(HostTensor),
}

/// The feeds of `inputs` at one shape of a sweep: `shapes` gives the swept
/// inputs (by their index in `inputs`) their shape; an input fed neither way
/// is left to the run's default.
pub fn at_shapes(
    specs: &[FeedSpec],
    inputs: &[TensorInfo],
    shapes: &[(usize, Vec<usize>)],
    options: &FeedOptions,
) -> Result<Vec<(String, ShapedFeed)>> {
    let mut given: Vec<Option<Reading>> = (0..inputs.len()).map(|_| None).collect();
    for spec in specs {
        let reading = spec.reading(inputs)?;
        for index in targets(&reading, specs.len(), inputs)? {
            if given[index].is_some() {
                bail!("input '{}' is fed twice", inputs[index].name);
            }
            given[index] = Some(reading.clone());
        }
    }
    let mut feeds = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        let named = |text: &str| ShapedFeed::Spec(format!("{}:{text}", input.name));
        let feed = match (shapes.iter().find(|(swept, _)| *swept == index), &given[index]) {
            (None, Some(reading)) => named(reading.source_text),
            (None, None) => continue,
            (Some((_, shape)), reading) => {
                let at = TensorInfo {
                    shape: shape.clone(),
                    ..input.clone()
                };
                at_shape(&at, reading.as_ref(), options)?
            }
        };
        feeds.push((input.name.clone(), feed));
    }
    Ok(feeds)
}

/// The feed of `input` at its swept shape (`input.shape`), from what the user gave it.
fn at_shape(input: &TensorInfo, reading: Option<&Reading>, options: &FeedOptions) -> Result<ShapedFeed> {
    let named = |text: String| ShapedFeed::Spec(format!("{}:{text}", input.name));
    let dims = || {
        let dims: Vec<String> = input.shape.iter().map(usize::to_string).collect();
        dims.join(",")
    };
    let Some(reading) = reading else {
        return Ok(named(format!("#rand(0,{},{})", default_max(input.dtype), dims())));
    };
    let context = |what: &str| format!("input '{}' from '{}': {what}", input.name, reading.source_text);
    match reading.source {
        Source::Random(random) => match random.bounds_alone() {
            Some((min, max)) => Ok(named(format!("#rand({min},{max},{})", dims()))),
            None => bail!(context(
                "--sweep gives the input its shapes: write #rand(MIN,MAX) without one"
            )),
        },
        Source::Image(path) => {
            let laid_out =
                image::load(path, input, true).map_err(|err| anyhow::anyhow!("{}", context(&format!("{err:#}"))))?;
            Ok(ShapedFeed::Values(repeated_to(laid_out, &input.shape)))
        }
        Source::Npy(_) | Source::Npz { .. } | Source::Json(_) => {
            let (held, _) = reading.source.load(input, options)?;
            if held.shape != input.shape {
                bail!(context(&format!(
                    "it holds shape {}, and the sweep runs the input at {}: a file or a literal feeds the shape it holds only \
                     (leave -i {} out for #rand, or feed an image, which is resized)",
                    format_shape(&held.shape),
                    format_shape(&input.shape),
                    input.name
                )));
            }
            Ok(named(reading.source_text.to_string()))
        }
    }
}

/// An image laid out with a batch of one, repeated to fill `shape`'s batch.
fn repeated_to(image: HostTensor, shape: &[usize]) -> HostTensor {
    let batch = match (image.shape.first(), shape.first()) {
        (Some(1), Some(&batch)) if image.shape.len() == shape.len() && batch > 1 => batch,
        _ => return image,
    };
    let mut repeated = image.clone();
    repeated.shape[0] = batch;
    repeated.data = image.data.repeat(batch);
    repeated
}
