//! Writing a comparison's pictures so that a reader never sees half a file: each PNG is
//! written to a temporary file in the same folder, then renamed over its name (a rename in
//! one folder is atomic). If any picture fails, the temporary file and the pictures already
//! written by the same call are removed, so the comparison is there whole or not at all.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ImageEncoder, RgbImage};

use crate::error::{Result, VisualError};

/// A picture to write: one already drawn, or one drawn only when its turn comes (so a
/// full-page comparison holds one extra picture in memory at a time, not three).
pub(crate) enum Picture<'a> {
    Drawn(&'a RgbImage),
    Later(&'a dyn Fn() -> RgbImage),
}

/// Writes every `(path, picture)` whole, or none of them.
pub(crate) fn write_all_or_none(pictures: &[(PathBuf, Picture)]) -> Result<()> {
    let mut written: Vec<&Path> = Vec::new();
    for (path, picture) in pictures {
        let result = match picture {
            Picture::Drawn(image) => write_png_atomically(path, image),
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

/// Writes one PNG through a temporary file renamed into place.
pub(crate) fn write_png_atomically(path: &Path, image: &RgbImage) -> Result<()> {
    let write_error = |source| VisualError::Write {
        path: path.to_path_buf(),
        source,
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // Dropping a `NamedTempFile` that was not persisted deletes it: every early return below
    // leaves nothing behind.
    let mut builder = tempfile::Builder::new();
    builder.prefix(".vaider-").suffix(".png.partial");
    // A temporary file is private (0600); a picture is not: the umask decides, as for any file.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temporary = builder.tempfile_in(folder).map_err(write_error)?;
    {
        let mut writer = BufWriter::new(temporary.as_file_mut());
        // Fast deflate: a full-page diff is mostly flat grey, which compresses well anyway, and
        // the default level takes seconds on a 37-megapixel page.
        PngEncoder::new_with_quality(&mut writer, CompressionType::Fast, FilterType::Up)
            .write_image(
                image.as_raw(),
                image.width(),
                image.height(),
                image::ExtendedColorType::Rgb8,
            )
            .map_err(|error| write_error(std::io::Error::other(error)))?;
        writer.flush().map_err(write_error)?;
    }
    temporary
        .persist(path)
        .map_err(|error| write_error(error.error))?;
    Ok(())
}
