//! Writing a comparison's pictures so that a reader never sees half a file: each PNG goes
//! through the one atomic write (a temporary file renamed over its name). If any picture
//! fails, the temporary file and the pictures already written by the same call are removed, so
//! the comparison is there whole or not at all.

use std::path::{Path, PathBuf};

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ImageEncoder, RgbImage};
use vaider_core::atomic_file;

use crate::error::{Result, VisualError};

/// A picture to write: one already drawn, or one drawn only when its turn comes (so a
/// full-page comparison holds one extra picture in memory at a time, not three).
pub(crate) enum Picture<'a> {
    Drawn(&'a RgbImage),
    /// The diff picture, whose RGB rows exist only as they are written.
    Diff(&'a crate::DiffPicture),
    Later(&'a dyn Fn() -> RgbImage),
}

/// Writes every `(path, picture)` whole, or none of them.
pub(crate) fn write_all_or_none(pictures: &[(PathBuf, Picture)]) -> Result<()> {
    let mut written: Vec<&Path> = Vec::new();
    for (path, picture) in pictures {
        let result = match picture {
            Picture::Drawn(image) => write_png_atomically(path, image),
            Picture::Diff(picture) => picture.write_png(path),
            Picture::Later(draw) => write_png_atomically(path, &draw()),
        };
        if let Err(error) = result {
            for done in written {
                // Best effort: the error being reported is the first one.
                let _ = std::fs::remove_file(done);
            }
            return Err(error);
        }
        written.push(path);
    }
    Ok(())
}

/// Writes one PNG whole or not at all (vaider_core::atomic_file), left to the OS cache: a
/// picture is drawn again by comparing again, and a sync would hold up the answer.
pub(crate) fn write_png_atomically(path: &Path, image: &RgbImage) -> Result<()> {
    atomic_file::write_with(path, atomic_file::Sync::Cached, |out| {
        // Fast deflate: a full-page diff is mostly flat grey, which compresses well anyway, and
        // the default level takes seconds on a 37-megapixel page.
        PngEncoder::new_with_quality(out, CompressionType::Fast, FilterType::Up)
            .write_image(
                image.as_raw(),
                image.width(),
                image.height(),
                image::ExtendedColorType::Rgb8,
            )
            .map_err(std::io::Error::other)
    })
    .map_err(|source| VisualError::Write {
        path: path.to_path_buf(),
        source,
    })
}
