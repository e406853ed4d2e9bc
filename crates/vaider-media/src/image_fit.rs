//! Fits an image to what a provider accepts, instead of failing: a format it does not take is
//! converted (WebP or GIF to PNG), an image over its pixel or byte limit is downscaled and, if
//! still too large, re-encoded as JPEG. An image that already fits is passed on untouched.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader};

use vaider_base::error::{Result, VaiderError};

/// What a provider takes for one image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageLimits {
    /// MIME types it accepts, e.g. `["image/png", "image/jpeg"]`.
    pub formats: Vec<String>,
    /// Largest encoded image it accepts, in bytes.
    pub max_bytes: u64,
    /// Longest side in pixels; 0 for no limit.
    pub max_side: u32,
}

impl ImageLimits {
    pub fn takes(&self, mime_type: &str) -> bool {
        self.formats.iter().any(|f| f == mime_type)
    }
}

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FittedImage {
    pub mime_type: &'static str,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// What was done to make it fit, for the interaction log; None when sent as it was.
    pub adapted: Option<String>,
}

/// Makes `bytes` (of type `mime_type`) fit `limits`.
pub fn fit(bytes: Vec<u8>, mime_type: &'static str, limits: &ImageLimits) -> Result<FittedImage> {
    let reader = ImageReader::new(Cursor::new(&bytes))
        .with_guessed_format()
        .map_err(|e| decode_error(mime_type, e))?;
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| decode_error(mime_type, e))?;
    let fits_side = limits.max_side == 0 || width.max(height) <= limits.max_side;
    if limits.takes(mime_type) && bytes.len() as u64 <= limits.max_bytes && fits_side {
        return Ok(FittedImage {
            mime_type,
            bytes,
            width,
            height,
            adapted: None,
        });
    }
    let image = image::load_from_memory(&bytes).map_err(|e| decode_error(mime_type, e))?;
    let (image, notes) = within_side(image, limits);
    encode_within(image, mime_type, limits, notes)
}

/// The first frame of an animated image, as a still that fits `limits` (never the animation
/// itself: a model that takes GIF or WebP may take only stills, and one that plays them would
/// see more than the tool looks at).
pub fn first_frame(
    bytes: Vec<u8>,
    mime_type: &'static str,
    limits: &ImageLimits,
) -> Result<FittedImage> {
    let image = image::load_from_memory(&bytes).map_err(|e| decode_error(mime_type, e))?;
    let (image, notes) = within_side(image, limits);
    encode_within(image, mime_type, limits, notes)
}

/// The image no longer than the provider's longest side (its proportions kept), with the note
/// that says so when it had to shrink.
fn within_side(image: DynamicImage, limits: &ImageLimits) -> (DynamicImage, Vec<String>) {
    let (width, height) = (image.width(), image.height());
    if limits.max_side == 0 || width.max(height) <= limits.max_side {
        return (image, Vec::new());
    }
    let image = image.resize(
        limits.max_side,
        limits.max_side,
        image::imageops::FilterType::Triangle,
    );
    let note = format!(
        "downscaled from {width}x{height} to {}x{}",
        image.width(),
        image.height()
    );
    (image, vec![note])
}

/// Encodes the image in a format the provider takes, within its byte limit: smaller by a
/// quarter each time it does not fit, down to 64 pixels a side.
fn encode_within(
    mut image: DynamicImage,
    mime_type: &'static str,
    limits: &ImageLimits,
    mut notes: Vec<String>,
) -> Result<FittedImage> {
    // PNG keeps screenshot text crisp; JPEG only when PNG is not taken or too large.
    let png_allowed = limits.takes("image/png");
    let jpeg_allowed = limits.takes("image/jpeg");
    for _ in 0..8 {
        if png_allowed {
            let png = encode(&image, ImageFormat::Png)?;
            if png.len() as u64 <= limits.max_bytes {
                return Ok(done(png, "image/png", &image, mime_type, notes));
            }
        }
        if jpeg_allowed {
            let jpeg = encode(&DynamicImage::ImageRgb8(image.to_rgb8()), ImageFormat::Jpeg)?;
            if jpeg.len() as u64 <= limits.max_bytes {
                return Ok(done(jpeg, "image/jpeg", &image, mime_type, notes));
            }
        }
        if !png_allowed && !jpeg_allowed {
            break;
        }
        let (w, h) = (image.width() * 3 / 4, image.height() * 3 / 4);
        if w < 64 || h < 64 {
            break;
        }
        image = image.resize(w, h, image::imageops::FilterType::Triangle);
        notes.push(format!(
            "downscaled to {w}x{h} to fit {} bytes",
            limits.max_bytes
        ));
    }
    Err(VaiderError::InvalidRequest(format!(
        "The image cannot be made to fit this provider (formats {}, at most {} bytes). Try another provider or a smaller image.",
        limits.formats.join(", "),
        limits.max_bytes
    )))
}

fn done(
    bytes: Vec<u8>,
    to: &'static str,
    image: &DynamicImage,
    from: &str,
    mut notes: Vec<String>,
) -> FittedImage {
    if to != from {
        notes.push(format!("converted {from} to {to}"));
    }
    FittedImage {
        mime_type: to,
        width: image.width(),
        height: image.height(),
        bytes,
        adapted: Some(notes.join("; ")),
    }
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image
        .write_to(&mut out, format)
        .map_err(|e| VaiderError::internal("re-encode the image", e))?;
    Ok(out.into_inner())
}

fn decode_error(mime_type: &str, e: impl std::fmt::Display) -> VaiderError {
    VaiderError::InvalidPath {
        message: format!("The {mime_type} image could not be decoded ({e}); check that it opens in an image viewer."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        // Noise makes PNG compress badly, as a busy screenshot does.
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            let v = ((x * 31 + y * 17) ^ (x * y)) as u8;
            image::Rgb([v, v.wrapping_mul(3), v.wrapping_add(x as u8)])
        });
        encode(&DynamicImage::ImageRgb8(image), ImageFormat::Png).unwrap()
    }

    fn any() -> ImageLimits {
        ImageLimits {
            formats: vec!["image/png".into(), "image/jpeg".into()],
            max_bytes: 50 * 1024 * 1024,
            max_side: 0,
        }
    }

    #[test]
    fn an_image_that_fits_is_untouched() {
        let bytes = png(100, 50);
        let fitted = fit(bytes.clone(), "image/png", &any()).unwrap();
        assert_eq!(fitted.bytes, bytes);
        assert_eq!((fitted.width, fitted.height), (100, 50));
        assert_eq!(fitted.adapted, None);
    }

    #[test]
    fn an_oversized_image_is_downscaled_below_the_limits() {
        let limits = ImageLimits {
            max_side: 800,
            ..any()
        };
        let fitted = fit(png(2400, 1200), "image/png", &limits).unwrap();
        assert_eq!((fitted.width, fitted.height), (800, 400));
        assert!(fitted
            .adapted
            .unwrap()
            .contains("downscaled from 2400x1200"));

        let big = png(1500, 1500);
        let limits = ImageLimits {
            max_bytes: big.len() as u64 / 5,
            ..any()
        };
        let fitted = fit(big, "image/png", &limits).unwrap();
        assert!(fitted.bytes.len() as u64 <= limits.max_bytes);
    }

    #[test]
    fn webp_becomes_png_for_a_provider_that_does_not_take_it() {
        let webp = encode(
            &image::load_from_memory(&png(64, 64)).unwrap(),
            ImageFormat::WebP,
        )
        .unwrap();
        let fitted = fit(webp, "image/webp", &any()).unwrap();
        assert_eq!(fitted.mime_type, "image/png");
        assert_eq!(
            image::guess_format(&fitted.bytes).unwrap(),
            ImageFormat::Png
        );
    }
}
