//! The screenshot store of contracts.md §1, in the agent's project: `.screenshots/phases/`
//! holds each capture as `NN-name.png` with its metadata `NN-name.json` and the list of all of
//! them in phase order (`.index.json`); `.screenshots/comparisons/` holds what a comparison
//! drew. Every file is written whole or not at all (a temporary file, then a rename), and a
//! capture that fails half-way leaves neither its files nor its index entry behind.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use vaider_core::atomic_file;

use crate::error::{Result, VisualError};

pub use vaider_capture::SelectorRegion;

/// One stored screenshot's metadata, as `NN-name.json` and `.index.json` hold it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Screenshot {
    pub name: String,
    /// ISO-8601 UTC.
    pub timestamp: String,
    pub description: String,
    pub phase: u32,
    /// "web", "linux", "macos", "windows", "ios-simulator", "android-emulator".
    pub platform: String,
    pub dimensions: Dimensions,
    pub file_size: u64,
    /// "sha256:<hex>".
    pub hash: String,
    /// A web capture's ignore selectors, resolved to rectangles of this image when it was
    /// taken: every comparison of this screenshot ignores them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_regions: Vec<SelectorRegion>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimensions {
    pub width: u32,
    pub height: u32,
}

/// A new screenshot to keep.
pub struct NewScreenshot<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub platform: &'a str,
    pub png: &'a [u8],
    pub timestamp: String,
    /// What the capture's ignore selectors matched (empty: none given).
    pub ignore_regions: Vec<SelectorRegion>,
}

/// The store under a project folder.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store of the project at `project` (`<project>/.screenshots`); nothing is created
    /// until something is kept.
    pub fn in_project(project: &Path) -> Store {
        Store {
            root: project.join(".screenshots"),
        }
    }

    /// `<project>/.screenshots`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn phases_dir(&self) -> PathBuf {
        self.root.join("phases")
    }

    pub fn comparisons_dir(&self) -> PathBuf {
        self.root.join("comparisons")
    }

    /// The path of a stored screenshot's PNG.
    pub fn png_path(&self, shot: &Screenshot) -> PathBuf {
        self.phases_dir().join(format!("{}.png", file_stem(shot)))
    }

    /// Every stored screenshot, in phase order (an empty list when nothing was kept yet).
    pub fn list(&self) -> Result<Vec<Screenshot>> {
        let index = self.phases_dir().join(".index.json");
        match std::fs::read(&index) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| VisualError::Store {
                message: format!(
                    "{} is not a screenshot index ({e}); move it away to start a new one",
                    index.display()
                ),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(VisualError::Store {
                message: format!(
                    "cannot read {} ({e}); check its permissions",
                    index.display()
                ),
            }),
        }
    }

    /// Keeps a screenshot as the next phase: its PNG, its metadata and its index entry, all
    /// or nothing. Captures into one store are numbered one after another even when they
    /// run at once (a lock file orders them).
    pub fn add(&self, shot: NewScreenshot<'_>) -> Result<Screenshot> {
        check_name(shot.name)?;
        let dir = self.phases_dir();
        std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
        let _lock = StoreLock::take(&dir)?;
        let mut index = self.list()?;
        let (width, height) = png_size(shot.png)?;
        let kept = Screenshot {
            name: shot.name.to_string(),
            timestamp: shot.timestamp,
            description: shot.description.to_string(),
            phase: index.iter().map(|s| s.phase).max().unwrap_or(0) + 1,
            platform: shot.platform.to_string(),
            dimensions: Dimensions { width, height },
            file_size: shot.png.len() as u64,
            hash: format!("sha256:{}", hex::encode(Sha256::digest(shot.png))),
            ignore_regions: shot.ignore_regions,
        };
        let stem = file_stem(&kept);
        let png = dir.join(format!("{stem}.png"));
        let meta = dir.join(format!("{stem}.json"));
        index.push(kept.clone());
        let written = write_atomic(&png, shot.png)
            .and_then(|_| write_atomic(&meta, &json_bytes(&kept)))
            .and_then(|_| write_atomic(&dir.join(".index.json"), &json_bytes(&index)));
        if let Err(e) = written {
            // The index is written last: when it failed, the entry was never listed.
            let _ = std::fs::remove_file(&png);
            let _ = std::fs::remove_file(&meta);
            return Err(e);
        }
        Ok(kept)
    }

    /// Removes one phase, or all but the last `keep_last` phases; returns what was removed.
    pub fn remove(&self, which: Removal) -> Result<Vec<Screenshot>> {
        let dir = self.phases_dir();
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let _lock = StoreLock::take(&dir)?;
        let index = self.list()?;
        let (gone, kept): (Vec<_>, Vec<_>) = match which {
            Removal::Phase(phase) => index.into_iter().partition(|s| s.phase == phase),
            Removal::AllButLast(n) => {
                let cut = index.len().saturating_sub(n);
                let mut all = index;
                let kept = all.split_off(cut);
                (all, kept)
            }
        };
        // The index first: a file left by a failure after it is unlisted, never a listed
        // entry without its file.
        write_atomic(&dir.join(".index.json"), &json_bytes(&kept))?;
        for shot in &gone {
            let stem = file_stem(shot);
            let _ = std::fs::remove_file(dir.join(format!("{stem}.png")));
            let _ = std::fs::remove_file(dir.join(format!("{stem}.json")));
        }
        Ok(gone)
    }

    /// The stored screenshot a path points at, if it is one of this store's.
    pub fn find(&self, path: &Path) -> Option<Screenshot> {
        let name = path.file_name()?;
        self.list()
            .ok()?
            .into_iter()
            .find(|s| std::ffi::OsStr::new(&format!("{}.png", file_stem(s))) == name)
    }

    /// The stored screenshot at `path` when the file is this store's own (in its phases
    /// folder, the same bytes as when kept), for what was kept with it: a copy elsewhere or a
    /// file replaced since does not carry the capture's ignore regions.
    pub fn find_kept(&self, path: &Path) -> Option<Screenshot> {
        let shot = self.find(path)?;
        let folder = path.parent()?.canonicalize().ok()?;
        if folder != self.phases_dir().canonicalize().ok()? {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        (format!("sha256:{}", hex::encode(Sha256::digest(&bytes))) == shot.hash).then_some(shot)
    }
}

/// What `Store::remove` removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    Phase(u32),
    AllButLast(usize),
}

/// `01-before-card-update`: the phase, two digits at least, then the name.
fn file_stem(shot: &Screenshot) -> String {
    format!("{:02}-{}", shot.phase, shot.name)
}

/// A screenshot's name becomes part of a file name: letters, digits, `-`, `_` and `.` only.
pub fn check_name(name: &str) -> Result<()> {
    let fine = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(VisualError::Store {
            message: format!(
                "the name {name:?} cannot be a file name: use letters, digits, '-', '_' or '.' (at most 100), e.g. \"before-card-update\""
            ),
        })
    }
}

/// A PNG's width and height, read from its header.
pub fn png_dimensions(png: &[u8]) -> Result<(u32, u32)> {
    png_size(png)
}

fn png_size(png: &[u8]) -> Result<(u32, u32)> {
    let reader =
        image::ImageReader::with_format(std::io::Cursor::new(png), image::ImageFormat::Png);
    reader.into_dimensions().map_err(|e| VisualError::Store {
        message: format!("the capture is not a PNG ({e})"),
    })
}

fn json_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

fn write_error(path: &Path, source: std::io::Error) -> VisualError {
    VisualError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes a file of the store whole or not at all (vaider_core::atomic_file), synced to the
/// disk: the index and the metadata cannot be made again.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_file::write(path, bytes, atomic_file::Sync::ToDisk).map_err(|e| write_error(path, e))
}

/// The store's lock, held while the index is read and written.
struct StoreLock(File);

impl StoreLock {
    fn take(dir: &Path) -> Result<StoreLock> {
        let path = dir.join(".lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| write_error(&path, e))?;
        file.lock().map_err(|e| write_error(&path, e))?;
        Ok(StoreLock(file))
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        image::RgbaImage::new(width, height)
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Png,
            )
            .unwrap();
        bytes
    }

    fn keep(store: &Store, name: &str, png: &[u8]) -> Result<Screenshot> {
        store.add(NewScreenshot {
            name,
            description: "a test",
            platform: "web",
            png,
            timestamp: "2026-11-22T18:00:00.000Z".into(),
            ignore_regions: Vec::new(),
        })
    }

    #[test]
    fn captures_are_numbered_in_phases_with_metadata_and_an_index() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        assert!(store.list().unwrap().is_empty());
        let image = png(30, 20);
        let first = keep(&store, "before-card-update", &image).unwrap();
        let second = keep(&store, "after-card-update", &png(31, 20)).unwrap();
        assert_eq!((first.phase, second.phase), (1, 2));
        assert_eq!(
            first.dimensions,
            Dimensions {
                width: 30,
                height: 20
            }
        );
        assert_eq!(first.file_size, image.len() as u64);
        assert_eq!(
            first.hash,
            format!("sha256:{}", hex::encode(Sha256::digest(&image)))
        );
        let dir = project.path().join(".screenshots/phases");
        assert_eq!(
            std::fs::read(dir.join("01-before-card-update.png")).unwrap(),
            image
        );
        let meta: Screenshot =
            serde_json::from_slice(&std::fs::read(dir.join("01-before-card-update.json")).unwrap())
                .unwrap();
        assert_eq!(meta, first);
        assert_eq!(store.list().unwrap(), vec![first.clone(), second]);
        assert_eq!(
            store.find(&dir.join("01-before-card-update.png")),
            Some(first)
        );
    }

    #[test]
    fn a_bad_name_or_a_non_png_is_refused_and_leaves_nothing() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        let err = keep(&store, "../escape", &png(2, 2)).unwrap_err();
        assert!(err.to_string().contains("letters, digits"), "{err}");
        let err = keep(&store, "shot", b"not a png").unwrap_err();
        assert!(err.to_string().contains("not a PNG"), "{err}");
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn a_failed_index_write_leaves_no_file_and_no_entry() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        let first = keep(&store, "one", &png(2, 2)).unwrap();
        // The index cannot be replaced: a folder stands in its place (as root, permissions
        // would not stop the write).
        let dir = store.phases_dir();
        let index = std::fs::read(dir.join(".index.json")).unwrap();
        std::fs::remove_file(dir.join(".index.json")).unwrap();
        std::fs::create_dir(dir.join(".index.json")).unwrap();
        assert!(keep(&store, "two", &png(2, 2)).is_err());
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [".index.json", ".lock", "01-one.json", "01-one.png"]);
        std::fs::remove_dir(dir.join(".index.json")).unwrap();
        std::fs::write(dir.join(".index.json"), index).unwrap();
        assert_eq!(store.list().unwrap(), vec![first]);
    }

    #[test]
    fn cleanup_removes_a_phase_or_keeps_the_last_ones() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        for name in ["a", "b", "c", "d", "e"] {
            keep(&store, name, &png(2, 2)).unwrap();
        }
        let gone = store.remove(Removal::Phase(2)).unwrap();
        assert_eq!(gone.iter().map(|s| s.phase).collect::<Vec<_>>(), [2]);
        assert!(!store.phases_dir().join("02-b.png").exists());
        let gone = store.remove(Removal::AllButLast(3)).unwrap();
        assert_eq!(gone.iter().map(|s| s.phase).collect::<Vec<_>>(), [1]);
        let left: Vec<u32> = store.list().unwrap().iter().map(|s| s.phase).collect();
        assert_eq!(left, [3, 4, 5]);
        // The next capture still counts on from the highest phase.
        assert_eq!(keep(&store, "f", &png(2, 2)).unwrap().phase, 6);
    }
}
