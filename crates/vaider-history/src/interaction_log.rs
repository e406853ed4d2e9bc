//! The interaction files: every call writes `request.json` and `response.json` into
//! `<media>.VaiderInteractions/<UTC timestamp>-<id>/` beside the media, so whoever looks at a
//! test video also finds what the agent asked about it and what it was told. When the media's
//! folder cannot be written (a read-only checkout), or what is there is not the user's own
//! folder (a symlink or another user's folder planted in `/tmp`), the files go under the data
//! folder instead.

use std::path::{Path, PathBuf};

use serde::Serialize;

use vaider_base::error::{Result, VaiderError};
use vaider_base::{atomic_file, owner};

pub struct InteractionLog {
    dir: PathBuf,
}

/// `<root>/<folder>` beside the media, when both are real folders of the user's own: in a
/// shared folder such as `/tmp`, a `<media>.VaiderInteractions` planted by someone else (a
/// symlink to another place, or a folder of theirs) is never written into.
fn beside(root: &Path, folder: &str) -> Option<PathBuf> {
    let made = |path: &Path| match std::fs::create_dir(path) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::AlreadyExists,
    };
    if !made(root) {
        return None;
    }
    // Checked after the create, without following a symlink: what is there now is used.
    if !owner::is_own_folder(root) {
        tracing::warn!(
            dir = %root.display(),
            "not writing into an interaction folder that is a symlink or another user's; the files go to the data folder"
        );
        return None;
    }
    let dir = root.join(folder);
    (made(&dir) && owner::is_own_folder(&dir)).then_some(dir)
}

impl InteractionLog {
    /// Creates the interaction's folder beside the media, or under `fallback_root` when that
    /// is not writable.
    pub fn create(media: &Path, folder_name: &str, fallback_root: &Path) -> Result<InteractionLog> {
        let root = {
            let mut name = media.file_name().unwrap_or_default().to_os_string();
            name.push(".VaiderInteractions");
            media.with_file_name(name)
        };
        if let Some(dir) = beside(&root, folder_name) {
            return Ok(InteractionLog { dir });
        }
        let stem = media
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let fallback = fallback_root
            .join("interactions")
            .join(format!("{stem}.VaiderInteractions"))
            .join(folder_name);
        std::fs::create_dir_all(&fallback).map_err(|e| {
            VaiderError::internal(
                format!("create the interaction folder {}", fallback.display()),
                e,
            )
        })?;
        tracing::info!(
            media = %media.display(),
            dir = %fallback.display(),
            "the media's folder is not writable; interaction files go to the data folder"
        );
        Ok(InteractionLog { dir: fallback })
    }

    /// The interaction folder of an earlier call.
    pub fn at(dir: &Path) -> InteractionLog {
        InteractionLog {
            dir: dir.to_path_buf(),
        }
    }

    pub fn has_response(&self) -> bool {
        self.dir.join("response.json").exists()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn write_request(&self, request: &impl Serialize) -> Result<()> {
        self.write("request.json", request)
    }

    pub fn write_response(&self, response: &impl Serialize) -> Result<()> {
        self.write("response.json", response)
    }

    fn write(&self, name: &str, value: &impl Serialize) -> Result<()> {
        let path = self.dir.join(name);
        let text = serde_json::to_vec_pretty(value)
            .map_err(|e| VaiderError::internal(format!("encode {name}"), e))?;
        // A reader never sees half a file; not synced, so no call waits on the disk.
        atomic_file::write(&path, &text, atomic_file::Sync::Cached)
            .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_go_beside_the_media() {
        let dir = tempfile::tempdir().unwrap();
        let media = dir.path().join("video.webm");
        std::fs::write(&media, b"x").unwrap();
        let log = InteractionLog::create(&media, "20261122T010203Z-abc", dir.path()).unwrap();
        assert_eq!(
            log.dir(),
            dir.path()
                .join("video.webm.VaiderInteractions/20261122T010203Z-abc")
        );
        log.write_request(&serde_json::json!({"a": 1})).unwrap();
        let text = std::fs::read_to_string(log.dir().join("request.json")).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap()["a"],
            1
        );
    }

    /// Someone else plants `<media>.VaiderInteractions` in a shared folder as a symlink to a
    /// place of their choosing: Vaider's files must not land there.
    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_not_followed() {
        let shared = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let media = shared.path().join("clip.webm");
        std::fs::write(&media, b"x").unwrap();
        std::os::unix::fs::symlink(
            elsewhere.path(),
            shared.path().join("clip.webm.VaiderInteractions"),
        )
        .unwrap();
        let log = InteractionLog::create(&media, "t-1", data.path()).unwrap();
        log.write_request(&serde_json::json!({"secret": "asked"}))
            .unwrap();
        assert!(
            log.dir().starts_with(data.path()),
            "{}",
            log.dir().display()
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    /// A folder of another user's in the shared folder is not written into either (root can
    /// give a folder away; skipped otherwise).
    #[cfg(unix)]
    #[test]
    fn another_users_folder_is_not_written_into() {
        if owner::current_user() != 0 {
            eprintln!("skipped: only root can give a folder to another user");
            return;
        }
        let shared = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let media = shared.path().join("clip.webm");
        std::fs::write(&media, b"x").unwrap();
        let theirs = shared.path().join("clip.webm.VaiderInteractions");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let log = InteractionLog::create(&media, "t-1", data.path()).unwrap();
        assert!(log.dir().starts_with(data.path()));
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    }

    #[test]
    fn an_unwritable_media_folder_falls_back_to_the_data_folder() {
        let media_dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let media = media_dir.path().join("clip.mp4");
        std::fs::write(&media, b"x").unwrap();
        // A file where the folder should go makes it unwritable even for root, who ignores
        // permission bits.
        std::fs::write(media_dir.path().join("clip.mp4.VaiderInteractions"), b"").unwrap();
        let log = InteractionLog::create(&media, "t-1", data.path()).unwrap();
        assert_eq!(
            log.dir(),
            data.path()
                .join("interactions/clip.mp4.VaiderInteractions/t-1")
        );
    }
}
