//! The one error type of the visual comparison. Each message names the file and says what to
//! do, since an agent reads it and has to act on it.

use std::path::PathBuf;

/// What can go wrong comparing two screenshots or writing the pictures of a comparison.
#[derive(Debug, thiserror::Error)]
pub enum VisualError {
    #[error(
        "cannot read the {which} image {path}: {source}. Check that the path exists and is a \
         readable PNG (or JPEG, WebP, GIF) screenshot"
    )]
    Read {
        which: &'static str,
        path: PathBuf,
        source: image::ImageError,
    },
    #[error(
        "cannot write {path}: {source}. Check that the folder exists and is writable and that \
         the disk has room; nothing partial was left behind"
    )]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot name comparison pictures after {stem:?}: use a plain file name such as \
         \"01-vs-02\", without folders"
    )]
    InvalidStem { stem: String },
    /// The screenshot store refused or could not do something; the message says what to do.
    #[error("{message}")]
    Store { message: String },
    /// An option out of its range; the message gives the range and the default.
    #[error("{0}")]
    Option(String),
}

pub type Result<T> = std::result::Result<T, VisualError>;
