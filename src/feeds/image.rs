//! Images, read and laid out like MegEngine's `auto_reformat_image` does with OpenCV:
//! `cv2.imread(path, cv2.IMREAD_COLOR)` (BGR, HWC, 8-bit; JPEG through libjpeg-turbo as OpenCV), `cv2.resize` (bilinear) when asked,
//! `cv2.cvtColor(BGR2GRAY)` for one channel, then NCHW or NHWC with a batch of one.

use std::io::BufReader;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use image::{DynamicImage, ImageDecoder, ImageError, ImageFormat, ImageReader, Limits};

use super::checked_element_count;
use super::jpeg;
use crate::input_files;
use crate::memory;
use crate::tensor::{format_shape, HostTensor, TensorInfo};

/// The most pixels an image that `--resize-input` resizes may have (a
/// camera's photo has a few tens of millions): checked from its header, as
/// an image fed at its own size is checked against the feed's bound.
const MAX_PIXELS_TO_RESIZE: usize = 64 << 20;

/// How an image meets its input's shape.
pub(super) enum Sizing<'a> {
    /// Resized to the input's declared height and width (`--resize-input`).
    Resized,
    /// At its own size, which the feed's bound (`fits`) must take.
    Own(&'a dyn Fn(&[usize]) -> Result<()>),
}

/// The image at `path` as a feed of `info`, sized as `sizing` says; its
/// size is checked as its header gives it, before it is decoded.
pub(super) fn load(path: &Path, info: &TensorInfo, sizing: Sizing) -> Result<HostTensor> {
    let layout = Layout::for_shape(&info.shape)?;
    let decodable = |height: usize, width: usize| match sizing {
        Sizing::Own(fits) => fits(&layout.shape(height, width)),
        Sizing::Resized if height.saturating_mul(width) > MAX_PIXELS_TO_RESIZE => bail!(
            "the image is {width}x{height}: more than the {} megapixels --resize-input resizes",
            MAX_PIXELS_TO_RESIZE >> 20
        ),
        Sizing::Resized => Ok(()),
    };
    let mut image = read_bgr(path, &decodable)?;
    if matches!(sizing, Sizing::Resized) {
        let (height, width) = layout
            .size
            .filter(|&(height, width)| height > 0 && width > 0)
            .ok_or_else(|| {
                anyhow!(
                    "cannot resize to shape {}: no height and width",
                    format_shape(&info.shape)
                )
            })?;
        checked_element_count(&[height, width, 3], info.dtype)?;
        image = image.resized(height, width)?;
    }
    let shape = layout.shape(image.height, image.width);
    // Laid out as the tensor's values are made: the pixels are not copied on the way.
    let pixels = &image.pixels;
    let values: Box<dyn Iterator<Item = u8>> = match (layout.channels, layout.channels_last) {
        (1, _) => Box::new(pixels.chunks_exact(3).map(bgr_to_gray)),
        (_, true) => Box::new(pixels.iter().copied()),
        (channels, false) => {
            Box::new((0..channels).flat_map(move |channel| pixels.iter().skip(channel).step_by(channels).copied()))
        }
    };
    HostTensor::from_f64(shape, info.dtype, values.map(f64::from))
}

/// How the input wants its image, from its declared shape.
struct Layout {
    channels: usize,
    channels_last: bool,
    /// Rank 4 (with a batch dim) rather than rank 3.
    batched: bool,
    /// Declared (height, width), the target of `--resize-input`.
    size: Option<(usize, usize)>,
}

impl Layout {
    fn for_shape(shape: &[usize]) -> Result<Self> {
        let (batched, dims) = match *shape {
            // No declared shape: `auto_reformat_image` makes it NCHW at the image's own size.
            [] => {
                return Ok(Layout {
                    channels: 3,
                    channels_last: false,
                    batched: true,
                    size: None,
                })
            }
            [d0, d1, d2] => (false, [1, d0, d1, d2]),
            [d0, d1, d2, d3] => (true, [d0, d1, d2, d3]),
            _ => bail!(
                "cannot lay an image out as shape {}: expected NCHW, NHWC, CHW or HWC",
                format_shape(shape)
            ),
        };
        // Like `auto_reformat_image`: channels first when dim 1 can be channels, else last.
        let layout = match dims {
            [_, channels @ (1 | 3), height, width] => {
                Layout { channels, channels_last: false, batched, size: Some((height, width)) }
            }
            [_, height, width, channels @ (1 | 3)] => {
                Layout { channels, channels_last: true, batched, size: Some((height, width)) }
            }
            _ => bail!(
                "can't infer the image layout from shape {}: expected 1 or 3 channels in dim {} (NCHW) or in the last dim (NHWC)",
                format_shape(shape),
                usize::from(batched)
            ),
        };
        Ok(layout)
    }

    /// The shape of an image of `height` and `width` laid out so.
    fn shape(&self, height: usize, width: usize) -> Vec<usize> {
        let mut shape = match self.channels_last {
            true => vec![height, width, self.channels],
            false => vec![self.channels, height, width],
        };
        if self.batched {
            shape.insert(0, 1);
        }
        shape
    }
}

/// An 8-bit, 3-channel BGR image, rows of interleaved pixels (OpenCV's `Mat` of `CV_8UC3`).
struct BgrImage {
    height: usize,
    width: usize,
    pixels: Vec<u8>,
}

/// The image at `path`, decoded once `decodable` takes its height and width
/// as its header gives them.
fn read_bgr(path: &Path, decodable: &dyn Fn(usize, usize) -> Result<()>) -> Result<BgrImage> {
    let cannot_read = |err: std::io::Error| anyhow!("cannot read file: {err}");
    let cannot_decode = |err: ImageError| anyhow!("cannot decode image: {err}");
    // Like OpenCV, trust the content over the extension.
    let (file, _) = input_files::open(path, &input_files::IMAGE)?;
    let reader = ImageReader::new(BufReader::new(file))
        .with_guessed_format()
        .map_err(cannot_read)?;
    // `cv2.imread` applies the EXIF orientation.
    let (mut image, orientation) = if reader.format() == Some(ImageFormat::Jpeg) {
        jpeg::decode(reader.into_inner(), decodable)?
    } else {
        let mut decoder = reader.into_decoder().map_err(cannot_decode)?;
        let (width, height) = decoder.dimensions();
        decodable(height as usize, width as usize)?;
        Limits::default()
            .reserve(decoder.total_bytes())
            .map_err(cannot_decode)?;
        let orientation = decoder.orientation().map_err(cannot_decode)?;
        (DynamicImage::from_decoder(decoder).map_err(cannot_decode)?, orientation)
    };
    image.apply_orientation(orientation);
    let (height, width) = (image.height() as usize, image.width() as usize);
    if height == 0 || width == 0 {
        bail!("the image is empty ({width}x{height})");
    }
    // OpenCV drops the low byte of 16-bit samples, where `into_rgb8` would round.
    // Taken, not copied, where the image is RGB already: the decoded image is the largest buffer.
    let color = image.color();
    let mut pixels: Vec<u8> = if color.bytes_per_pixel() == 2 * color.channel_count() {
        image
            .into_rgb16()
            .into_raw()
            .into_iter()
            .map(|sample| (sample >> 8) as u8)
            .collect()
    } else {
        image.into_rgb8().into_raw()
    };
    for pixel in pixels.chunks_exact_mut(3) {
        pixel.swap(0, 2);
    }
    Ok(BgrImage { height, width, pixels })
}

/// `cv2.cvtColor(..., COLOR_BGR2GRAY)` on 8-bit data: fixed point with 15 fractional bits
/// (OpenCV 4.x's `RGB2Gray<uchar>`; its 14-bit coefficients differ on 43864 colors).
fn bgr_to_gray(pixel: &[u8]) -> u8 {
    let [blue, green, red] = [pixel[0], pixel[1], pixel[2]].map(u32::from);
    ((blue * 3735 + green * 19235 + red * 9798 + (1 << 14)) >> 15) as u8
}

/// OpenCV's fixed-point scale for bilinear weights (`INTER_RESIZE_COEF_BITS` = 11).
const WEIGHT_ONE: f32 = 2048.0;

/// One output coordinate of a bilinear resize: the two source samples and their weights.
struct Tap {
    near: usize,
    far: usize,
    near_weight: i32,
    far_weight: i32,
}

/// The taps along one axis as OpenCV's `resize` computes them for `INTER_LINEAR`: half-pixel
/// centres and weights rounded to 11 fractional bits. Past the edges OpenCV snaps columns to
/// the edge sample (`snap_edges`) but for rows only clips the indices, keeping the weights.
fn linear_taps(source_len: usize, target_len: usize, snap_edges: bool, what: &str) -> Result<Vec<Tap>> {
    let scale = 1.0 / (target_len as f64 / source_len as f64);
    let last = source_len as i64 - 1;
    let mut taps = memory::with_capacity(target_len, what)?;
    taps.extend((0..target_len).map(|target| {
        let position = ((target as f64 + 0.5) * scale - 0.5) as f32;
        let floor = position.floor();
        let (index, fraction) = match floor as i64 {
            index if snap_edges && index < 0 => (0, 0.0),
            index if snap_edges && index >= last => (last, 0.0),
            index => (index, position - floor),
        };
        let clip = |index: i64| index.clamp(0, last) as usize;
        let weight = |share: f32| (share * WEIGHT_ONE).round_ties_even() as i32;
        Tap {
            near: clip(index),
            far: clip(index + 1),
            near_weight: weight(1.0 - fraction),
            far_weight: weight(fraction),
        }
    }));
    Ok(taps)
}

impl BgrImage {
    /// `cv2.resize(image, (width, height))` with `INTER_LINEAR`: a horizontal pass into
    /// fixed-point rows, then a vertical pass back to 8 bits. The memory of
    /// both, sized by the target's shape, is asked for first (see `memory`).
    fn resized(&self, height: usize, width: usize) -> Result<BgrImage> {
        let what = format!("the image resized to {width}x{height}");
        let columns = linear_taps(self.width, width, true, &what)?;
        let row_len = width.checked_mul(3).with_context(|| what.clone())?;
        let mut rows: Vec<Vec<i32>> = memory::with_capacity(self.height, &what)?;
        for row in self.pixels.chunks_exact(self.width * 3) {
            let sample = |x: usize, channel: usize| i32::from(row[x * 3 + channel]);
            let mut blended = memory::with_capacity(row_len, &what)?;
            blended.extend(columns.iter().flat_map(|tap| {
                (0..3).map(move |c| sample(tap.near, c) * tap.near_weight + sample(tap.far, c) * tap.far_weight)
            }));
            rows.push(blended);
        }
        // The rounding of OpenCV's SIMD vertical pass (`VResizeLinearVec_32s8u`), which is what
        // x86 and ARM builds run: each product is truncated before the sum is rounded.
        let blend = |value: i32, weight: i32| ((value >> 4) * weight) >> 16;
        let mut pixels = memory::with_capacity(height.checked_mul(row_len).with_context(|| what.clone())?, &what)?;
        pixels.extend(linear_taps(self.height, height, false, &what)?.iter().flat_map(|tap| {
            let (near, far) = (&rows[tap.near], &rows[tap.far]);
            near.iter().zip(far).map(move |(&near_value, &far_value)| {
                let sum = blend(near_value, tap.near_weight) + blend(far_value, tap.far_weight);
                ((sum + 2) >> 2).clamp(0, 255) as u8
            })
        }));
        Ok(BgrImage { height, width, pixels })
    }
}
