//! JPEG decoded as `cv2.imread(path, IMREAD_COLOR)` decodes it in opencv-python 4.8
//! (`modules/imgcodecs/src/grfmt_jpeg.cpp`): libjpeg-turbo's decoder with its defaults
//! (integer slow DCT, fancy upsampling), RGB out, or CMYK out for 4-component files
//! converted by OpenCV's own formula; the EXIF orientation from the first APP1 segment.

use std::io::BufRead;
use std::panic::{self, AssertUnwindSafe};

use anyhow::{anyhow, Result};
use image::metadata::Orientation;
use image::{DynamicImage, Limits, RgbImage};
use mozjpeg::{ColorSpace, DctMethod, Decompress, Marker};

/// The decoded pixels (RGB) and the orientation `cv2.imread` applies to them.
/// `decodable` sees the height and width of the header first.
pub(super) fn decode(
    reader: impl BufRead,
    decodable: &dyn Fn(usize, usize) -> Result<()>,
) -> Result<(DynamicImage, Orientation)> {
    // libjpeg reports corrupt data by unwinding out of the decoder (the `mozjpeg` crate's
    // error manager); it carries the message and never reaches the panic hook.
    panic::catch_unwind(AssertUnwindSafe(|| decode_unguarded(reader, decodable))).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map_or("libjpeg failed", String::as_str)
            .trim_start_matches("libjpeg fatal error: ");
        Err(anyhow!("cannot decode image: {message}"))
    })
}

fn decode_unguarded(
    reader: impl BufRead,
    decodable: &dyn Fn(usize, usize) -> Result<()>,
) -> Result<(DynamicImage, Orientation)> {
    let cannot_decode = |err: std::io::Error| anyhow!("cannot decode image: {err}");
    let mut decompress = Decompress::with_markers(&[Marker::APP(1)])
        .from_reader(reader)
        .map_err(cannot_decode)?;
    // OpenCV reads the first APP1 as EXIF, past its 6-byte "Exif\0\0" header.
    let orientation = decompress
        .markers()
        .find(|marker| marker.marker == Marker::APP(1))
        .and_then(|marker| marker.data.get(6..).and_then(Orientation::from_exif_chunk))
        .unwrap_or(Orientation::NoTransforms);
    let (width, height) = decompress.size();
    decodable(height, width)?;
    Limits::default()
        .reserve(width as u64 * height as u64 * 4)
        .map_err(|err| anyhow!("cannot decode image: {err}"))?;
    decompress.dct_method(DctMethod::IntegerSlow);
    decompress.do_fancy_upsampling(true);
    let cmyk = decompress.components().len() == 4;
    let output = if cmyk {
        ColorSpace::JCS_CMYK
    } else {
        ColorSpace::JCS_RGB
    };
    let mut started = decompress.to_colorspace(output).map_err(cannot_decode)?;
    let samples: Vec<u8> = started.read_scanlines().map_err(cannot_decode)?;
    started.finish().map_err(cannot_decode)?;
    let rgb = if cmyk {
        samples.chunks_exact(4).flat_map(cmyk_to_rgb).collect()
    } else {
        samples
    };
    let image = RgbImage::from_raw(width as u32, height as u32, rgb)
        .ok_or_else(|| anyhow!("cannot decode image: fewer rows than the header declares"))?;
    Ok((DynamicImage::ImageRgb8(image), orientation))
}

/// OpenCV's `icvCvt_CMYK2BGR_8u_C4C3R` (libjpeg's CMYK from Adobe files is inverted).
fn cmyk_to_rgb(pixel: &[u8]) -> [u8; 3] {
    let [cyan, magenta, yellow, black] = [pixel[0], pixel[1], pixel[2], pixel[3]].map(i32::from);
    let channel = |ink: i32| (black - (((255 - ink) * black) >> 8)) as u8;
    [channel(cyan), channel(magenta), channel(yellow)]
}
