//! Which file a checked path names: its device and inode, taken before the content check,
//! compared after it and again just before the file is sent. The check and the upload open
//! the file by its path; a file swapped in between (a symlink planted in its place, another
//! file renamed over it) is refused rather than sent unchecked. A file still being written
//! keeps its inode, and is accepted as before.

use std::path::Path;

use crate::error::{Result, VaiderError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    device: u64,
    inode: u64,
}

/// The identity of the file `path` leads to now; None when it cannot be read.
pub(super) fn of(path: &Path) -> Option<Identity> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (device, inode) = {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    };
    #[cfg(not(unix))]
    let (device, inode) = (0, 0);
    Some(Identity { device, inode })
}

/// Err when `path` no longer leads to the file that was checked.
pub(super) fn unchanged(path: &Path, checked: &Option<Identity>) -> Result<()> {
    if checked.is_some() && of(path) == *checked {
        return Ok(());
    }
    Err(VaiderError::InvalidPath {
        message: format!(
            "{} was replaced after Vaider checked it (another file or a symlink now has its name); it was not sent.",
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_swapped_after_its_check_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let media = dir.path().join("shot.png");
        std::fs::write(&media, b"checked").unwrap();
        let checked = of(&media);
        assert!(unchanged(&media, &checked).is_ok());
        // Another file renamed over it, of the same size: a different inode.
        let other = dir.path().join("other");
        std::fs::write(&other, b"swapped").unwrap();
        std::fs::rename(&other, &media).unwrap();
        let err = unchanged(&media, &checked).unwrap_err().to_string();
        assert!(err.contains("replaced after Vaider checked it"), "{err}");
        assert!(unchanged(&dir.path().join("missing"), &None).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_after_the_check_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let media = dir.path().join("clip.webm");
        std::fs::write(&media, b"checked").unwrap();
        let checked = of(&media);
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"checked").unwrap();
        std::fs::remove_file(&media).unwrap();
        std::os::unix::fs::symlink(&secret, &media).unwrap();
        assert!(unchanged(&media, &checked).is_err());
    }
}
