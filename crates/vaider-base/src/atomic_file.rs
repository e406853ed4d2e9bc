//! Writing a file whole or not at all, the one way every part of Vaider does it (interaction
//! files, the screenshot store, comparison pictures, QA plans and runs). The bytes go to a
//! temporary file in the same folder, which is then renamed over the name: a rename within one
//! folder is atomic, so a reader sees the old file or the new one, never half of either. On
//! any failure the temporary file removes itself and the old file is untouched. What Vaider
//! writes (recorded pages, typed text, plans) is the user's alone: files are created 0600, and
//! the data folder 0700 ([`create_private_dir`]).

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
    // The temporary file is private (0600), and so stays the finished file.
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

/// Creates `dir` (and its parents) and makes `dir` itself private (0700 on Unix), also when it
/// was there already with wider permissions: the data folder holds recorded pages and the token.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)?.permissions().mode() & 0o777;
        if mode != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Makes an existing file private (0600 on Unix): for files another library creates (the
/// history's database).
pub fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
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
    fn the_finished_file_and_the_data_folder_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        write(&path, b"{}", Sync::ToDisk).unwrap();
        assert_eq!(mode(&path), 0o600);
        // Replacing a file keeps it private.
        write(&path, b"{\"v\":2}", Sync::Cached).unwrap();
        assert_eq!(mode(&path), 0o600);
        let data = dir.path().join("a/data");
        create_private_dir(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
        // A folder made before, open to all, is closed.
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
    }
}
