//! Why a file was refused before anything was sent: the media error that [`VaiderError`]
//! carries, and the kind of file it names. The checks themselves are vaider-media's; the
//! error lives here so the one error type can carry it without depending on the checks.
//!
//! [`VaiderError`]: crate::error::VaiderError

use std::fmt;
use std::path::{Path, PathBuf};

/// Whether a file is a video or a still image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    Video,
    Image,
}

impl MediaKind {
    /// Lower-case name for messages: "video" or "image".
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Video => "video",
            MediaKind::Image => "image",
        }
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a file was refused. Messages are read by people and AI agents, so each says what was wrong,
/// with the path, and what to do next. None of them ever quotes file content.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error(
        "{path} does not exist. Check the path; relative paths are resolved against the client's \
         workspace root."
    )]
    NotFound { path: PathBuf },

    #[error(
        "{path} is not a regular file (it is a directory, device, socket or similar). Pass the path \
         of the video or image file itself (for Playwright: test-results/<test>/video.webm)."
    )]
    NotAFile { path: PathBuf },

    #[error(
        "{path} could not be read ({reason}). Check that the Vaider server is allowed to read it; \
         nothing was uploaded."
    )]
    Unreadable { path: PathBuf, reason: String },

    #[error(
        "{path} is empty (0 bytes). If it is a test recording it may not have been written yet; \
         wait for the test to finish and try again."
    )]
    Empty { path: PathBuf },

    #[error(
        "{path} is {} ({size_bytes} bytes), over the {} ({limit_bytes} bytes) upload limit. Send a \
         shorter recording (e.g. only the failing test) or a smaller resolution; nothing was uploaded.",
        human_size(*.size_bytes),
        human_size(*.limit_bytes)
    )]
    TooLarge {
        path: PathBuf,
        size_bytes: u64,
        limit_bytes: u64,
    },

    #[error(
        "{path} is not a video or image{}. Vaider only sends WebM, MP4/MOV, AVI, PNG, JPEG, WebP \
         or GIF files (GIF, APNG and WebP animations too), checked by content; nothing was \
         uploaded.",
        looks_like_clause(*.looks_like)
    )]
    NotMedia {
        path: PathBuf,
        looks_like: Option<&'static str>,
    },

    #[error(
        "{path} looks like a truncated {format} file ({detail}); the recording may still be being \
         written, wait for the test to finish and try again."
    )]
    Truncated {
        path: PathBuf,
        format: &'static str,
        detail: String,
    },

    #[error(
        "{path} is {what}: it has sound but no picture to watch. Vaider watches screen \
         recordings and screenshots; pass a video with a picture (for Playwright: \
         test-results/<test>/video.webm), a GIF/APNG/WebP animation or an image; nothing was \
         uploaded."
    )]
    NoPicture { path: PathBuf, what: &'static str },

    #[error("{path} is a {found} file, but {}", wrong_kind_advice(*.expected))]
    WrongKind {
        path: PathBuf,
        expected: MediaKind,
        found: &'static str,
    },
}

impl MediaError {
    /// The path the error is about, as it was given to [`inspect`].
    pub fn path(&self) -> &Path {
        match self {
            MediaError::NotFound { path }
            | MediaError::NotAFile { path }
            | MediaError::Unreadable { path, .. }
            | MediaError::Empty { path }
            | MediaError::TooLarge { path, .. }
            | MediaError::NotMedia { path, .. }
            | MediaError::Truncated { path, .. }
            | MediaError::NoPicture { path, .. }
            | MediaError::WrongKind { path, .. } => path,
        }
    }
}

fn looks_like_clause(looks_like: Option<&'static str>) -> String {
    looks_like.map_or_else(String::new, |x| format!(" (it looks like {x})"))
}

fn wrong_kind_advice(expected: MediaKind) -> &'static str {
    match expected {
        MediaKind::Video => {
            "a video is needed here. Pass a WebM, MP4/MOV or AVI recording (for Playwright: \
             test-results/<test>/video.webm) or an animated GIF, APNG or WebP; nothing was \
             uploaded."
        }
        MediaKind::Image => {
            "an image is needed here. Pass a PNG, JPEG, WebP or GIF screenshot; nothing was \
             uploaded."
        }
    }
}

fn human_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    const MB: f64 = KB * 1024.0;
    const GB: f64 = MB * 1024.0;
    let b = bytes as f64;
    if b >= GB {
        format!("{:.2} GB", b / GB)
    } else if b >= MB {
        format!("{:.1} MB", b / MB)
    } else if b >= KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{bytes} bytes")
    }
}
