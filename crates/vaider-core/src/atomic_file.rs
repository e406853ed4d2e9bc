//! Writing a file whole or not at all, the one way every part of Vaider does it (interaction
//! files, the screenshot store, comparison pictures, QA plans and runs). The bytes go to a
//! temporary file in the same folder, which is then renamed over the name: a rename within one
//! folder is atomic, so a reader sees the old file or the new one, never half of either. On
//! any failure the temporary file removes itself and the old file is untouched.

use std::io::{BufWriter, Write};
use std::path::Path;

/// How far the bytes go before the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sync {
    /// Flushed to the disk first: the file survives a power cut. For records that cannot be
    /// made again (an index, a plan, a run).
    ToDisk,
    /// Left to the OS: readers still never see half a file, but a crash may lose the newest
    /// version. For what is cheap to make again and where the wait would show (pictures).
    Cached,
}

/// Writes `bytes` to `path` whole or not at all. The folder must exist.
pub fn write(path: &Path, bytes: &[u8], sync: Sync) -> std::io::Result<()> {
    write_with(path, sync, |out| out.write_all(bytes))
}

/// Like [`write`], for content produced as it is written (an encoder writing a picture):
/// `fill` writes into a buffered temporary file.
pub fn write_with(
    path: &Path,
    sync: Sync,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".vaider-").suffix(".partial");
    // A temporary file is private (0600); the finished file is like any other: the umask
    // decides who may read it.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    // Dropped before it is persisted (any early return below), it removes itself.
    let mut temporary = builder.tempfile_in(folder)?;
    {
        let mut out = BufWriter::new(temporary.as_file_mut());
        fill(&mut out)?;
        out.flush()?;
    }
    if sync == Sync::ToDisk {
        temporary.as_file().sync_data()?;
    }
    temporary.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.json");
        write(&path, b"old", Sync::ToDisk).unwrap();
        write(&path, b"new and longer", Sync::Cached).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new and longer");
        assert_eq!(names_in(dir.path()), ["index.json"]);
    }

    #[test]
    fn a_failed_fill_keeps_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diff.png");
        write(&path, b"old", Sync::Cached).unwrap();
        let err = write_with(&path, Sync::ToDisk, |out| {
            out.write_all(b"half a pic")?;
            Err(std::io::Error::other("the encoder failed"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the encoder failed");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names_in(dir.path()), ["diff.png"]);
    }

    #[test]
    fn a_missing_folder_is_an_error_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone/meta.json");
        let err = write(&path, b"x", Sync::ToDisk).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(names_in(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn the_finished_file_has_the_permissions_of_any_new_file_not_private_ones() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        write(&path, b"{}", Sync::ToDisk).unwrap();
        // A file created the ordinary way gets 0666 less the umask.
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, b"{}").unwrap();
        assert_eq!(mode(&path), mode(&plain));
    }
}
