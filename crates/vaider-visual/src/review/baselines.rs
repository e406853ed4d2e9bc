//! The approved pictures of a project, in `.vaider/baselines/` (meant to be committed): each
//! kept by the capture's name and its viewport or device (`home@1280x800.png`), with a small
//! JSON beside it (its size, hash, when it was approved and the regions every comparison with
//! it ignores). Nothing secret is ever written here; `.vaider/.gitignore` keeps the rest of
//! `.vaider/` out of git.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{io_error, Result, ReviewError};
use crate::store::write_atomic;

/// Which baseline a capture is compared with: its name and its viewport (`1280x800`), device
/// or platform.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BaselineKey {
    pub name: String,
    pub variant: String,
}

impl BaselineKey {
    /// A key, checked: both parts become a file name.
    pub fn new(name: &str, variant: &str) -> Result<BaselineKey> {
        crate::store::check_name(name).map_err(|e| ReviewError(e.to_string()))?;
        crate::store::check_name(variant).map_err(|_| {
            ReviewError(format!(
                "the viewport or device {variant:?} cannot be part of a file name: use letters, digits, '-', '_' or '.', e.g. \"1280x800\" or \"iphone-15\""
            ))
        })?;
        Ok(BaselineKey {
            name: name.to_string(),
            variant: variant.to_string(),
        })
    }

    /// `home@1280x800`.
    pub fn stem(&self) -> String {
        format!("{}@{}", self.name, self.variant)
    }
}

/// A rectangle every comparison with a baseline leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredArea {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    /// Why: "differed between 5 captures of the same screen", "the selector #clock".
    pub reason: String,
}

impl IgnoredArea {
    pub fn as_ignore_region(&self) -> crate::IgnoreRegion {
        crate::IgnoreRegion {
            x: self.x,
            y: self.y,
            width: self.width,
            height: self.height,
        }
    }
}

/// What is kept beside a baseline's PNG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineMeta {
    pub name: String,
    pub variant: String,
    pub width: u32,
    pub height: u32,
    /// "sha256:<hex>" of the PNG.
    pub hash: String,
    /// RFC 3339.
    pub approved_at: String,
    pub approved_by: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_regions: Vec<IgnoredArea>,
}

/// The baselines folder of a project.
#[derive(Debug, Clone)]
pub struct Baselines {
    project: PathBuf,
}

impl Baselines {
    pub fn in_project(project: &Path) -> Baselines {
        Baselines {
            project: project.to_path_buf(),
        }
    }

    /// `<project>/.vaider/baselines`.
    pub fn dir(&self) -> PathBuf {
        super::vaider_dir(&self.project).join("baselines")
    }

    pub fn png_path(&self, key: &BaselineKey) -> PathBuf {
        self.dir().join(format!("{}.png", key.stem()))
    }

    pub fn meta_path(&self, key: &BaselineKey) -> PathBuf {
        self.dir().join(format!("{}.json", key.stem()))
    }

    /// The baseline's metadata; none when there is no baseline (or its JSON is unreadable:
    /// then the picture is still compared, with nothing ignored).
    pub fn meta(&self, key: &BaselineKey) -> Option<BaselineMeta> {
        let bytes = std::fs::read(self.meta_path(key)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Creates the folder (and `.vaider/.gitignore`, so nothing else of `.vaider/` is
    /// committed by mistake).
    pub fn ensure(&self) -> Result<PathBuf> {
        let dir = self.dir();
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
        let vaider = super::vaider_dir(&self.project);
        vaider_core::config::write_project_gitignore(&vaider)
            .map_err(|e| io_error("write", &vaider.join(".gitignore"), e))?;
        Ok(dir)
    }

    /// Makes `png` the baseline of `key`, with its metadata.
    pub fn write(&self, key: &BaselineKey, png: &[u8], meta: &BaselineMeta) -> Result<()> {
        self.ensure()?;
        write_atomic(&self.png_path(key), png)?;
        let mut json = serde_json::to_vec_pretty(meta).unwrap_or_default();
        json.push(b'\n');
        write_atomic(&self.meta_path(key), &json)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_a_file_name_or_refused() {
        let key = BaselineKey::new("home", "1280x800").unwrap();
        assert_eq!(key.stem(), "home@1280x800");
        assert!(BaselineKey::new("../x", "1280x800").is_err());
        let err = BaselineKey::new("home", "a/b").unwrap_err();
        assert!(err.to_string().contains("1280x800"), "{err}");
    }

    #[test]
    fn a_baseline_is_kept_with_its_metadata_and_a_gitignore() {
        let project = tempfile::tempdir().unwrap();
        let baselines = Baselines::in_project(project.path());
        let key = BaselineKey::new("home", "400x300").unwrap();
        assert!(baselines.meta(&key).is_none());
        let meta = BaselineMeta {
            name: "home".into(),
            variant: "400x300".into(),
            width: 4,
            height: 3,
            hash: super::super::sha256(b"png"),
            approved_at: "2026-11-28T18:00:00Z".into(),
            approved_by: "ada".into(),
            ignore_regions: Vec::new(),
        };
        baselines.write(&key, b"png", &meta).unwrap();
        assert_eq!(baselines.meta(&key), Some(meta));
        assert_eq!(std::fs::read(baselines.png_path(&key)).unwrap(), b"png");
        assert!(project.path().join(".vaider/.gitignore").is_file());
    }
}
