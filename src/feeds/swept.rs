//! A sweep's feeds (`run --sweep`): each input's feed at one of the shapes
//! the sweep gives it. `#rand` takes the shape, an image is resized to it
//! (and repeated along a batch), a file or a literal feeds the shape it holds
//! only; inputs the sweep leaves alone keep their feed.

use anyhow::{bail, Context, Result};

use super::spec::{FeedSource, Reading};
use super::{default_max, image, named_spec, targets, FeedOptions, FeedSpec};
use crate::memory;
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
    let alone = inputs.len() == 1;
    for (index, input) in inputs.iter().enumerate() {
        let named = |text: &str| ShapedFeed::Spec(named_spec(&input.name, text, alone));
        let feed = match (shapes.iter().find(|(swept, _)| *swept == index), &given[index]) {
            (None, Some(reading)) => named(reading.source_text),
            (None, None) => continue,
            (Some((_, shape)), reading) => {
                let at = TensorInfo {
                    shape: shape.clone(),
                    ..input.clone()
                };
                at_shape(&at, reading.as_ref(), options, alone)?
            }
        };
        feeds.push((input.name.clone(), feed));
    }
    Ok(feeds)
}

/// The feed of `input` at its swept shape (`input.shape`), from what the user gave it.
fn at_shape(input: &TensorInfo, reading: Option<&Reading>, options: &FeedOptions, alone: bool) -> Result<ShapedFeed> {
    let named = |text: String| ShapedFeed::Spec(named_spec(&input.name, &text, alone));
    let dims = || {
        let dims: Vec<String> = input.shape.iter().map(usize::to_string).collect();
        dims.join(",")
    };
    let Some(reading) = reading else {
        return Ok(named(format!("#rand(0,{},{})", default_max(input.dtype), dims())));
    };
    let context = |what: &str| format!("input '{}' from '{}': {what}", input.name, reading.source_text);
    match reading.source {
        FeedSource::Random(random) => match random.bounds_alone() {
            Some((min, max)) => Ok(named(format!("#rand({min},{max},{})", dims()))),
            None => bail!(context(
                "--sweep gives the input its shapes: write #rand(MIN,MAX) without one"
            )),
        },
        FeedSource::Image(path) => {
            let laid_out = image::load(path, input, image::Sizing::Resized)
                .map_err(|err| anyhow::anyhow!("{}", context(&format!("{err:#}"))))?;
            let repeated = repeated_to(laid_out, &input.shape)
                .map_err(|err| anyhow::anyhow!("{}", context(&format!("{err:#}"))))?;
            Ok(ShapedFeed::Values(repeated))
        }
        FeedSource::Npy(_) | FeedSource::Npz { .. } | FeedSource::Json(_) => {
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

/// An image laid out with a batch of one, repeated to fill `shape`'s batch
/// (its memory asked for first: see `memory`).
fn repeated_to(mut image: HostTensor, shape: &[usize]) -> Result<HostTensor> {
    let batch = match (image.shape.first(), shape.first()) {
        (Some(1), Some(&batch)) if image.shape.len() == shape.len() && batch > 1 => batch,
        _ => return Ok(image),
    };
    let what = format!("a batch of {batch} images");
    let mut data = memory::with_capacity(
        image.data.len().checked_mul(batch).with_context(|| what.clone())?,
        &what,
    )?;
    for _ in 0..batch {
        data.extend_from_slice(&image.data);
    }
    image.shape[0] = batch;
    image.data = data;
    Ok(image)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::tensor::DType;

    fn input(name: &str, shape: &[usize], dtype: DType) -> TensorInfo {
        TensorInfo {
            name: name.to_string(),
            shape: shape.to_vec(),
            dtype,
        }
    }

    fn feeds_at(
        specs: &[&str],
        inputs: &[TensorInfo],
        shapes: &[(usize, Vec<usize>)],
    ) -> Result<Vec<(String, ShapedFeed)>> {
        let specs: Vec<FeedSpec> = specs.iter().map(|spec| FeedSpec::parse(spec)).collect();
        let options = FeedOptions {
            seed: 0,
            resize_input: false,
        };
        at_shapes(&specs, inputs, shapes, &options)
    }

    fn spec(text: &str) -> ShapedFeed {
        ShapedFeed::Spec(text.to_string())
    }

    #[test]
    fn random_values_take_the_shape_and_other_inputs_keep_their_feed() {
        let inputs = [input("data", &[1, 3], DType::F32), input("label", &[1], DType::I32)];
        let fed = feeds_at(&["label:[7]"], &inputs, &[(0, vec![4, 3])]).unwrap();
        assert_eq!(
            fed,
            [
                ("data".to_string(), spec("data:#rand(0,1,4,3)")),
                ("label".to_string(), spec("label:[7]"))
            ]
        );
        let bytes = [input("image", &[1, 8], DType::U8)];
        let fed = feeds_at(&["image:#rand(1,9.5)"], &bytes, &[(0, vec![2, 8])]).unwrap();
        assert_eq!(fed, [("image".to_string(), spec("image:#rand(1,9.5,2,8)"))]);
        let fed = feeds_at(&[], &bytes, &[(0, vec![2, 8])]).unwrap();
        assert_eq!(
            fed[0].1,
            spec("image:#rand(0,255,2,8)"),
            "the default of an integer input"
        );
        let shaped = feeds_at(&["image:#rand(0,1,1,8)"], &bytes, &[(0, vec![2, 8])]).unwrap_err();
        assert!(format!("{shaped:#}").contains("without one"), "{shaped:#}");
    }

    /// `big.png` resized as MegEngine's `trace.dump` feeds resize it
    /// (`image_uint8__big_png_resize` in `fixtures/manifest.json`), once per item of the batch.
    #[test]
    fn an_image_is_resized_to_the_shape_and_repeated_along_its_batch() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let image = root.join("fixtures/feeds/big.png").display().to_string();
        let inputs = [input("image", &[1, 3, 16, 16], DType::U8)];
        let fed = feeds_at(&[&format!("image:{image}")], &inputs, &[(0, vec![2, 3, 32, 32])]).unwrap();
        let [(name, ShapedFeed::Values(values))] = fed.as_slice() else {
            panic!("{fed:?}");
        };
        let reference = root.join("fixtures/ref/image_uint8__big_png_resize/input_image.npy");
        let reference = crate::feeds::load_npy(&reference, DType::U8).unwrap();
        assert_eq!(
            (name.as_str(), values.shape.as_slice()),
            ("image", [2, 3, 32, 32].as_slice())
        );
        assert_eq!(values.data, reference.data.repeat(2));
    }

    #[test]
    fn a_file_feeds_the_shape_it_holds_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let file = root.join("fixtures/feeds/conv_data.npy").display().to_string();
        let inputs = [input("data", &[1, 3, 16, 16], DType::F32)];
        let spec_text = format!("data:{file}");
        let fits = feeds_at(&[&spec_text], &inputs, &[(0, vec![1, 3, 16, 16])]).unwrap();
        assert_eq!(fits[0].1, spec(&spec_text));
        let err = feeds_at(&[&spec_text], &inputs, &[(0, vec![2, 3, 16, 16])]).unwrap_err();
        let err = format!("{err:#}");
        assert!(
            err.contains("holds shape (1, 3, 16, 16), and the sweep runs the input at (2, 3, 16, 16)"),
            "{err}"
        );
    }
}
