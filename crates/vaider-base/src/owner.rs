//! Whose a file or folder is. Vaider writes beside media in shared folders (`/tmp`, a
//! colleague's checkout) and reads its token from a file: a folder someone else planted there
//! (a symlink to elsewhere, a folder of theirs) must not receive Vaider's files, and a token
//! file others can read is no secret. On other systems than Unix every path counts as ours.

use std::fs::Metadata;
use std::path::Path;

/// The user Vaider runs as.
#[cfg(unix)]
pub fn current_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether `meta` (of a path, not followed) belongs to the user Vaider runs as.
#[cfg(unix)]
pub fn is_ours(meta: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == current_user()
}

#[cfg(not(unix))]
pub fn is_ours(_meta: &Metadata) -> bool {
    true
}

/// Whether `path` is a real folder (not a symlink to one) of the user Vaider runs as.
pub fn is_own_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir() && is_ours(&meta))
}

/// What [`make_private`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    /// Readable by its owner only already.
    Private,
    /// Ours but readable or writable by others: now `0600`.
    Tightened { was: u32 },
}

/// Makes the file at `path` (followed, as any reader would) readable by its owner only, when
/// it is ours; Err names whose it is when it is someone else's.
#[cfg(unix)]
pub fn make_private(path: &Path) -> Result<Privacy, String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.uid() != current_user() {
        return Err(format!(
            "{} belongs to another user (uid {}, Vaider runs as {}): a secret someone else can read or replace is not used.",
            path.display(),
            meta.uid(),
            current_user()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok(Privacy::Private);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: could not make it private ({e})", path.display()))?;
    Ok(Privacy::Tightened { was: mode })
}

#[cfg(not(unix))]
pub fn make_private(_path: &Path) -> Result<Privacy, String> {
    Ok(Privacy::Private)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_symlinked_or_missing_folder_is_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        assert!(is_own_folder(dir.path()));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(!is_own_folder(&link));
        assert!(!is_own_folder(&dir.path().join("missing")));
    }

    #[test]
    fn a_loose_file_of_ours_is_made_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "t").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(make_private(&file), Ok(Privacy::Tightened { was: 0o644 }));
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(make_private(&file), Ok(Privacy::Private));
    }
}
