//! Vaider's local pixel diff of two screenshots: pixelmatch's changed-pixel count (equal to the
//! npm package's), the changed regions as numbered boxes, and the diff, annotation and heat-map
//! pictures that an agent, or the vision model after it, looks at.
//!
//! ```no_run
//! # fn main() -> Result<(), vaider_visual::VisualError> {
//! use std::path::Path;
//! let comparison = vaider_visual::compare(
//!     Path::new("01-before.png"),
//!     Path::new("02-after.png"),
//!     &vaider_visual::CompareOptions::default(),
//! )?;
//! println!("{} regions, {} pixels", comparison.total_changes(), comparison.changed_pixels());
//! comparison.write_images(Path::new(".screenshots/comparisons"), "01-vs-02")?;
//! # Ok(())
//! # }
//! ```

pub mod annotate;
pub mod diff;
pub mod error;
pub mod mask;
mod output;
pub mod regions;
pub mod review;
pub mod service;
pub mod settings;
pub mod store;
pub mod task;
pub mod zoom;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use image::{ImageReader, RgbImage, RgbaImage};

pub use diff::{
    diff_images, AlphaBackground, DiffOptions, DiffPicture, IgnoreRegion, PixelDiff, SizeChange,
};
pub use error::{Result, VisualError};
pub use mask::ChangedMask;
pub use regions::{find_regions, Region, RegionOptions};
pub use settings::CompareSettings;
pub use store::{Dimensions, NewScreenshot, Removal, Screenshot, Store};

use output::Picture;

/// How two screenshots are compared; the defaults are pixelmatch's and the regions' defaults.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompareOptions {
    pub diff: DiffOptions,
    pub regions: RegionOptions,
    /// A Gaussian blur of this many pixels (sigma) on both images before the diff: the design's
    /// noise rule, for screenshots noisier than a browser's (another GPU, a lossy codec). Off by
    /// default: measured (`noise-study`), it lost a full stop that the minimum region area
    /// keeps. With it, the count is no longer pixelmatch's (the pictures still show the
    /// screenshots as they are).
    pub blur: Option<f32>,
}

/// The largest blur a comparison takes: more would smear a word into its neighbours.
pub const MAX_BLUR: f32 = 3.0;

impl CompareOptions {
    /// The options an agent may set, checked: `None` keeps the default.
    pub fn with_noise_tolerance(min_region_pixels: Option<u64>, blur: Option<f32>) -> Result<Self> {
        let mut options = CompareOptions::default();
        if let Some(min) = min_region_pixels {
            if min == 0 || min > 1_000_000 {
                return Err(VisualError::Option(format!(
                    "min_region_pixels must be from 1 to 1000000, not {min}; the default, {}, drops 1-2 px specks of rendering noise",
                    regions::DEFAULT_MIN_REGION_PIXELS
                )));
            }
            options.regions.min_region_pixels = min;
        }
        if let Some(sigma) = blur {
            if !(0.0..=MAX_BLUR).contains(&sigma) {
                return Err(VisualError::Option(format!(
                    "blur must be from 0 to {MAX_BLUR} pixels, not {sigma}; 0 (the default) compares the pixels as they are"
                )));
            }
            options.blur = (sigma > 0.0).then_some(sigma);
        }
        Ok(options)
    }
}

/// Two screenshots compared: the counts, the regions, and what the pictures are drawn from.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub pixel_diff: PixelDiff,
    pub regions: Vec<Region>,
    /// The zoom pass's sheet; none when nothing changed.
    pub close_ups: Option<zoom::CloseUps>,
    /// Shared, not copied, with the pictures drawn later (a full page is 120 MB).
    after: Arc<RgbaImage>,
}

/// Where `Comparison::write_images` put the pictures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonImages {
    /// `<stem>-diff.png`; `None` when the diff image was not drawn (`draw_diff_image: false`).
    pub diff: Option<PathBuf>,
    pub annotation: PathBuf,
    pub heat_map: PathBuf,
    /// `<stem>-zoom.png`, the close-ups of the changed regions; none when nothing changed.
    pub close_ups: Option<PathBuf>,
}

/// Reads both screenshots (in parallel) and compares them.
pub fn compare(before: &Path, after: &Path, options: &CompareOptions) -> Result<Comparison> {
    let (before_image, after_image) = read_pair(before, after)?;
    Ok(compare_images(before_image, after_image, options))
}

/// Decodes both screenshots at once, one on another thread, as RGBA.
pub fn read_pair(before: &Path, after: &Path) -> Result<(RgbaImage, RgbaImage)> {
    let (before_image, after_image) = std::thread::scope(|scope| {
        let before_thread = std::thread::Builder::new()
            .spawn_scoped(scope, || read_image("before", before))
            .ok();
        let after_image = read_image("after", after);
        let before_image = match before_thread.map(|thread| thread.join()) {
            Some(Ok(image)) => image,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            // No thread to be had: read it here instead.
            None => read_image("before", before),
        };
        (before_image, after_image)
    });
    Ok((before_image?, after_image?))
}

/// Compares two decoded images; never fails, whatever their sizes. Takes the before-image
/// to let it go as soon as its close-ups are cut, before the sheet is drawn.
pub fn compare_images(before: RgbaImage, after: RgbaImage, options: &CompareOptions) -> Comparison {
    let pixel_diff = match options.blur {
        Some(sigma) => diff_images(
            &image::imageops::blur(&before, sigma),
            &image::imageops::blur(&after, sigma),
            &options.diff,
        ),
        None => diff_images(&before, &after, &options.diff),
    };
    let regions = find_regions(&pixel_diff.mask, &options.regions);
    let before_crops = zoom::BeforeCrops::cut(&before, after.dimensions(), &regions);
    drop(before);
    let close_ups = before_crops.map(|crops| crops.finish(&after));
    Comparison {
        pixel_diff,
        regions,
        close_ups,
        after: Arc::new(after),
    }
}

/// Decodes one screenshot as RGBA; `which` names it in the error ("baseline", "before").
pub fn read_screenshot(which: &'static str, path: &Path) -> Result<RgbaImage> {
    read_image(which, path)
}

fn read_image(which: &'static str, path: &Path) -> Result<RgbaImage> {
    if let Some(image) = read_png_as_rgba(path) {
        return Ok(image);
    }
    let read_error = |source| VisualError::Read {
        which,
        path: path.to_path_buf(),
        source,
    };
    let image = ImageReader::open(path)
        .map_err(|error| read_error(image::ImageError::IoError(error)))?
        .with_guessed_format()
        .map_err(|error| read_error(image::ImageError::IoError(error)))?
        .decode()
        .map_err(read_error)?;
    Ok(image.into_rgba8())
}

/// The largest decoded image taken, as the image crate's default limit: 512 MiB (a 11,585 px
/// square page in RGBA).
const MAX_DECODED_BYTES: usize = 512 * 1024 * 1024;

/// An 8-bit RGB or RGBA PNG (what browsers and screenshot tools write) decoded straight into
/// RGBA: no RGB copy beside the RGBA one (90 MB on a full page). `None` for anything else, or
/// any error, which the general reader then reports.
fn read_png_as_rgba(path: &Path) -> Option<RgbaImage> {
    let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let limits = png::Limits {
        bytes: MAX_DECODED_BYTES,
    };
    let mut decoder = png::Decoder::new_with_limits(file, limits);
    // 16-bit PNGs are left to the general reader, whose rounding to 8 bits they keep.
    decoder.set_transformations(png::Transformations::ALPHA);
    let mut reader = decoder.read_info().ok()?;
    if reader.output_color_type() != (png::ColorType::Rgba, png::BitDepth::Eight) {
        return None;
    }
    let size = reader.output_buffer_size()?;
    if size > MAX_DECODED_BYTES {
        return None;
    }
    let mut pixels = vec![0; size];
    let frame = reader.next_frame(&mut pixels).ok()?;
    pixels.truncate(frame.buffer_size());
    RgbaImage::from_raw(frame.width, frame.height, pixels)
}

impl Comparison {
    /// The number of changed regions, noise dropped: the contract's `total_changes`.
    pub fn total_changes(&self) -> usize {
        self.regions.len()
    }

    /// pixelmatch's count (plus the pixels outside the overlap when the sizes differ).
    pub fn changed_pixels(&self) -> u64 {
        self.pixel_diff.changed_pixels
    }

    /// Changed pixels as a percentage of the canvas, from 0 to 100 (0.08 means 0.08 %).
    pub fn diff_percentage(&self) -> f64 {
        if self.pixel_diff.canvas_pixels == 0 {
            return 0.0;
        }
        100.0 * self.pixel_diff.changed_pixels as f64 / self.pixel_diff.canvas_pixels as f64
    }

    /// The two sizes, when they differ.
    pub fn size_changed(&self) -> Option<SizeChange> {
        self.pixel_diff.size_changed
    }

    /// The after-image with each region boxed and numbered.
    pub fn annotation_image(&self) -> RgbImage {
        let canvas = (self.pixel_diff.mask.width(), self.pixel_diff.mask.height());
        annotate::annotation_image(&self.after, canvas, &self.regions)
    }

    /// Where changes are dense, over the dimmed after-image.
    pub fn heat_map_image(&self) -> RgbImage {
        annotate::heat_map_image(&self.after, &self.pixel_diff.mask)
    }

    /// Writes `<stem>-diff.png`, `<stem>-annotation.png`, `<stem>-heatmap.png` and, when a
    /// region changed, `<stem>-zoom.png` into `dir`, each through a temporary file renamed into place; on any failure none is left.
    pub fn write_images(&self, dir: &Path, stem: &str) -> Result<ComparisonImages> {
        let images = self.image_paths(dir, stem)?;
        let draw_annotation = || self.annotation_image();
        let draw_heat_map = || self.heat_map_image();
        let mut pictures = Vec::new();
        if let (Some(path), Some(image)) = (&images.diff, &self.pixel_diff.diff_image) {
            pictures.push((path.clone(), Picture::Diff(image)));
        }
        pictures.push((images.annotation.clone(), Picture::Later(&draw_annotation)));
        pictures.push((images.heat_map.clone(), Picture::Later(&draw_heat_map)));
        if let (Some(path), Some(close_ups)) = (&images.close_ups, &self.close_ups) {
            pictures.push((path.clone(), Picture::Drawn(&close_ups.image)));
        }
        output::write_all_or_none(&pictures)?;
        Ok(images)
    }

    /// Writes now only what is read now: the close-ups and, with `annotation_now`, the
    /// annotated image (the model is shown them); returns the rest (the diff image, which it
    /// takes out of the comparison, and the heat map) to be written off the answer's path.
    /// The paths are those `write_images` would use.
    pub fn write_images_split(
        &mut self,
        dir: &Path,
        stem: &str,
        annotation_now: bool,
    ) -> Result<(ComparisonImages, LaterPictures)> {
        let images = self.image_paths(dir, stem)?;
        let mut later = Vec::new();
        if let (Some(path), Some(image)) = (&images.diff, self.pixel_diff.diff_image.take()) {
            later.push((path.clone(), Later::Diff(image)));
        }
        let canvas = (self.pixel_diff.mask.width(), self.pixel_diff.mask.height());
        let annotation = Later::Annotation {
            after: Arc::clone(&self.after),
            canvas,
            regions: self.regions.clone(),
        };
        let mut now = Vec::new();
        let draw_annotation = || annotation.draw();
        match annotation_now {
            true => now.push((images.annotation.clone(), Picture::Later(&draw_annotation))),
            false => later.push((images.annotation.clone(), annotation.clone())),
        }
        if let (Some(path), Some(close_ups)) = (&images.close_ups, &self.close_ups) {
            now.push((path.clone(), Picture::Drawn(&close_ups.image)));
        }
        output::write_all_or_none(&now)?;
        later.push((
            images.heat_map.clone(),
            Later::HeatMap {
                after: Arc::clone(&self.after),
                mask: self.pixel_diff.mask.clone(),
            },
        ));
        Ok((images, LaterPictures { pictures: later }))
    }

    fn image_paths(&self, dir: &Path, stem: &str) -> Result<ComparisonImages> {
        if stem.is_empty() || stem.contains(['/', '\\']) || stem == "." || stem == ".." {
            return Err(VisualError::InvalidStem {
                stem: stem.to_string(),
            });
        }
        Ok(ComparisonImages {
            diff: self
                .pixel_diff
                .diff_image
                .as_ref()
                .map(|_| dir.join(format!("{stem}-diff.png"))),
            annotation: dir.join(format!("{stem}-annotation.png")),
            heat_map: dir.join(format!("{stem}-heatmap.png")),
            close_ups: self
                .close_ups
                .as_ref()
                .map(|_| dir.join(format!("{stem}-zoom.png"))),
        })
    }
}

/// The pictures of a comparison that no answer waits for, to be written by `write`, on another
/// thread: each is drawn only when its turn comes and dropped once written, so they add one
/// full-size picture at a time to memory.
pub struct LaterPictures {
    pictures: Vec<(PathBuf, Later)>,
}

#[derive(Clone)]
enum Later {
    Diff(DiffPicture),
    Annotation {
        after: Arc<RgbaImage>,
        canvas: (u32, u32),
        regions: Vec<Region>,
    },
    HeatMap {
        after: Arc<RgbaImage>,
        mask: ChangedMask,
    },
}

impl Later {
    fn draw(&self) -> RgbImage {
        match self {
            Later::Diff(picture) => picture.to_rgb(),
            Later::Annotation {
                after,
                canvas,
                regions,
            } => annotate::annotation_image(after, *canvas, regions),
            Later::HeatMap { after, mask } => annotate::heat_map_image(after, mask),
        }
    }
}

impl LaterPictures {
    /// Writes each picture whole (through a temporary file renamed into place), in turn; stops
    /// at the first failure, which it returns.
    pub fn write(self) -> Result<()> {
        for (path, picture) in self.pictures {
            match picture {
                Later::Diff(picture) => picture.write_png(&path)?,
                other => output::write_png_atomically(&path, &other.draw())?,
            }
        }
        Ok(())
    }
}

/// A PNG of the image at `path` no larger than `max_side` pixels a side, for an agent that
/// asked to see a picture inline (a whole screenshot would fill its context).
pub fn thumbnail(path: &Path, max_side: u32) -> Result<Vec<u8>> {
    let image = ImageReader::open(path)
        .map_err(|e| VisualError::Read {
            which: "annotated",
            path: path.to_path_buf(),
            source: image::ImageError::IoError(e),
        })?
        .decode()
        .map_err(|source| VisualError::Read {
            which: "annotated",
            path: path.to_path_buf(),
            source,
        })?;
    let small = image.thumbnail(max_side, max_side);
    let mut png = Vec::new();
    small
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| VisualError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
    Ok(png)
}

/// Makes this capability's model tasks known to the core by name (the history's "run again",
/// the status's list). The server and the CLI call it when they start.
pub fn register_tasks() {
    vaider_core::task::register(&[task::VISUAL_COMPARE, review::verdict::REVIEW_VERDICT]);
}

/// Puts a validation's failed `toHaveScreenshot`s up for review (see
/// `vaider_validate::snapshots`). The server and the CLI call it when they start.
pub fn register_snapshot_review() {
    review::playwright::review_validations();
}
