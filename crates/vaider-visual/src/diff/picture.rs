//! pixelmatch's diff picture, held small: a grey byte per pixel (the faded before-image) and
//! two bits saying which pixels are painted instead (changed, changed darker, anti-aliased).
//! The picture is made of those four kinds of pixel only, so it needs no more; its RGB rows
//! exist only as they are written (`write_png`) or asked for (`to_rgb`). At 4K it takes 10 MB
//! where the RGB image took 25, and on a 3,000 x 10,000 page 38 MB where it took 90: the diff
//! image is the one picture every comparison draws, and it waits for the answer to go out.

use std::io::Write;
use std::path::Path;

use image::RgbImage;
use vaider_core::atomic_file;

use crate::error::{Result, VisualError};

/// What a pixel of the picture shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Paint {
    /// The faded before-image (its grey byte).
    Faded = 0,
    /// A counted change (pixelmatch's `diffColor`).
    Changed = 1,
    /// A counted change that got darker (`diffColorAlt`).
    Darker = 2,
    /// An anti-aliased pixel, not counted (`aaColor`).
    AntiAliased = 3,
}

/// The diff picture: see the module's comment.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffPicture {
    width: usize,
    height: usize,
    grey: Vec<u8>,
    /// Two bits a pixel, four pixels a byte, each row starting on a byte.
    paints: Vec<u8>,
    /// The colours of `Changed`, `Darker` and `AntiAliased`.
    colours: [[u8; 3]; 3],
}

impl DiffPicture {
    /// A picture whose every pixel is still to be drawn (white until then).
    pub(super) fn new(width: usize, height: usize, colours: [[u8; 3]; 3]) -> DiffPicture {
        DiffPicture {
            width,
            height,
            grey: vec![255; width * height],
            paints: vec![0; paint_stride(width) * height],
            colours,
        }
    }

    pub fn width(&self) -> u32 {
        self.width as u32
    }

    pub fn height(&self) -> u32 {
        self.height as u32
    }

    /// The picture in bands of `rows` rows, each drawn on its own (by one thread).
    pub(super) fn bands_mut(&mut self, rows: usize) -> impl Iterator<Item = DiffRows<'_>> {
        let (width, stride) = (self.width, paint_stride(self.width));
        let grey = self.grey.chunks_mut((width * rows).max(1));
        let paints = self.paints.chunks_mut((stride * rows).max(1));
        grey.zip(paints).map(move |(grey, paints)| DiffRows {
            width,
            grey,
            paints,
        })
    }

    /// One row as RGB bytes, into `out` (3 bytes a pixel).
    fn row_rgb(&self, y: usize, out: &mut [u8]) {
        let grey = &self.grey[y * self.width..(y + 1) * self.width];
        let paints = &self.paints[y * paint_stride(self.width)..];
        for (x, (pixel, &value)) in out.chunks_exact_mut(3).zip(grey).enumerate() {
            let rgb = match (paints[x / 4] >> ((x % 4) * 2)) & 3 {
                0 => [value; 3],
                paint => self.colours[usize::from(paint) - 1],
            };
            pixel.copy_from_slice(&rgb);
        }
    }

    /// The whole picture as an RGB image (for a caller that wants the pixels; writing it does
    /// not need this).
    pub fn to_rgb(&self) -> RgbImage {
        let mut image = RgbImage::new(self.width as u32, self.height as u32);
        for (y, row) in image.chunks_exact_mut((self.width * 3).max(1)).enumerate() {
            self.row_rgb(y, row);
        }
        image
    }

    /// Writes the picture as a PNG, whole or not at all (through a temporary file renamed
    /// into place), a row at a time, with the fast settings of the comparison's other pictures.
    pub fn write_png(&self, path: &Path) -> Result<()> {
        atomic_file::write_with(path, atomic_file::Sync::Cached, |out| self.encode(out)).map_err(
            |source| VisualError::Write {
                path: path.to_path_buf(),
                source,
            },
        )
    }

    fn encode(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut encoder = png::Encoder::new(out, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::Filter::Up);
        let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
        let mut stream = writer.stream_writer().map_err(std::io::Error::other)?;
        let mut row = vec![0; self.width * 3];
        for y in 0..self.height {
            self.row_rgb(y, &mut row);
            stream.write_all(&row)?;
        }
        stream.finish().map_err(std::io::Error::other)
    }
}

/// Bytes of paint a row holds.
fn paint_stride(width: usize) -> usize {
    width.div_ceil(4)
}

/// A band of the picture's rows, for one thread to draw.
pub(super) struct DiffRows<'a> {
    width: usize,
    grey: &'a mut [u8],
    paints: &'a mut [u8],
}

impl DiffRows<'_> {
    /// Row `offset` of the band, if the band has it.
    pub(super) fn row(&mut self, offset: usize) -> Option<DiffRow<'_>> {
        let stride = paint_stride(self.width);
        let grey = self
            .grey
            .get_mut(offset * self.width..(offset + 1) * self.width)?;
        let paints = self
            .paints
            .get_mut(offset * stride..(offset + 1) * stride)?;
        Some(DiffRow { grey, paints })
    }
}

/// One row of the picture being drawn.
pub(super) struct DiffRow<'a> {
    grey: &'a mut [u8],
    paints: &'a mut [u8],
}

impl DiffRow<'_> {
    /// Pixel `x` in `paint`; a faded pixel in its grey `value`.
    pub(super) fn draw(&mut self, x: usize, paint: Paint, value: u8) {
        if let Some(grey) = self.grey.get_mut(x) {
            *grey = value;
        }
        if let Some(byte) = self.paints.get_mut(x / 4) {
            let shift = (x % 4) * 2;
            *byte = (*byte & !(3 << shift)) | ((paint as u8) << shift);
        }
    }

    /// The grey bytes of pixels `[from, to)`, for a run of faded pixels (whose paint is
    /// already `Faded`: each pixel is drawn once).
    pub(super) fn greys(&mut self, from: usize, to: usize) -> Option<&mut [u8]> {
        self.grey.get_mut(from..to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLOURS: [[u8; 3]; 3] = [[255, 0, 0], [0, 0, 255], [255, 255, 0]];

    #[test]
    fn each_pixel_shows_its_grey_or_its_paint_at_any_width() {
        for width in [1, 3, 4, 5, 9] {
            let mut picture = DiffPicture::new(width, 3, COLOURS);
            for mut band in picture.bands_mut(2) {
                for offset in 0..2 {
                    let Some(mut row) = band.row(offset) else {
                        continue;
                    };
                    for x in 0..width {
                        let paint = [Paint::Faded, Paint::Changed, Paint::Darker][x % 3];
                        row.draw(x, paint, 200 + x as u8);
                    }
                    if width > 3 {
                        row.draw(3, Paint::AntiAliased, 0);
                    }
                }
            }
            let rgb = picture.to_rgb();
            for y in 0..3 {
                for x in 0..width as u32 {
                    let want = match (x, x % 3) {
                        (3, _) => COLOURS[2],
                        (_, 0) => [200 + x as u8; 3],
                        (_, k) => COLOURS[k as usize - 1],
                    };
                    assert_eq!(rgb.get_pixel(x, y).0, want, "width {width}, ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn the_png_holds_the_same_pixels() {
        let mut picture = DiffPicture::new(7, 5, COLOURS);
        let mut band = picture.bands_mut(5).next().expect("one band");
        let mut row = band.row(4).expect("row 4");
        row.draw(6, Paint::Changed, 0);
        if let Some(greys) = row.greys(0, 3) {
            greys.copy_from_slice(&[10, 20, 30]);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("diff.png");
        picture.write_png(&path).expect("written");
        let read = image::open(&path).expect("a PNG").to_rgb8();
        assert_eq!(read, picture.to_rgb());
        assert_eq!(read.get_pixel(6, 4).0, COLOURS[0]);
        assert_eq!(read.get_pixel(1, 4).0, [20; 3]);
    }
}
