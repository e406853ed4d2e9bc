//! The pending changes of a project: a capture that has no baseline yet (`new`) or differs
//! from it (`changed`), waiting for a person's decision. Each is a folder of
//! `.vaider/local/review/` (git-ignored: the actual picture and the diff pictures are big and
//! local): `change.json`, `actual.png`, and the comparison's pictures. A newer capture of the
//! same baseline replaces an older pending one; decided changes stay, for undo and the log.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::baselines::IgnoredArea;
use super::{io_error, Result, ReviewError};
use crate::service::RegionData;
use crate::store::write_atomic;

/// A capture compared with its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BaselineStatus {
    /// No baseline yet: approving it makes one.
    New,
    /// The same as the baseline (rendering noise and ignored regions aside).
    Unchanged,
    /// Differs from the baseline: a pending change.
    Changed,
}

impl BaselineStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineStatus::New => "new",
            BaselineStatus::Unchanged => "unchanged",
            BaselineStatus::Changed => "changed",
        }
    }
}

/// Where a pending change came from, which says where approving it writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ChangeSource {
    /// A Vaider capture: its baseline is in `.vaider/baselines/`.
    Vaider,
    /// A failed `toHaveScreenshot` of a Playwright test: approving writes the snapshot file.
    Playwright {
        /// The test's title path, e.g. "home.spec.ts › the home page".
        test: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project: Option<String>,
    },
}

/// Where a pending change is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeState {
    Pending,
    Approved,
    Rejected,
}

/// The model's word on one changed region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionVerdict {
    pub region: u32,
    /// "regression", "intentional" or "noise".
    pub verdict: String,
    pub reason: String,
}

/// A change waiting for a person, with everything a review page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingChange {
    /// Short and stable: the same capture of the same baseline has the same id.
    pub id: String,
    pub name: String,
    /// The viewport (`1280x800`), device or platform; a Playwright project's name.
    pub variant: String,
    pub source: ChangeSource,
    /// `new` or `changed`.
    pub status: BaselineStatus,
    pub state: ChangeState,
    /// Where the baseline is, or will be once approved (absolute).
    pub baseline: PathBuf,
    /// The new picture (absolute), kept in the change's folder.
    pub actual: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_image: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotated: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heat_map: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_ups: Option<PathBuf>,
    pub changed_pixels: u64,
    pub regions: Vec<RegionData>,
    /// One per region when the model was asked; empty with `--no-model` or for a new one.
    #[serde(default)]
    pub verdicts: Vec<RegionVerdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_changes: Vec<String>,
    /// Regions that differed run to run, proposed as ignore regions: kept with the baseline
    /// once approved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposed_ignore: Vec<IgnoredArea>,
    /// The regions the comparison left out (the baseline's and the capture's selectors').
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<IgnoredArea>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction_id: Option<String>,
    /// RFC 3339.
    pub created: String,
    /// The decision that closed it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// The pending changes of a project.
#[derive(Debug, Clone)]
pub struct Changes {
    dir: PathBuf,
}

impl Changes {
    pub fn in_project(project: &Path) -> Changes {
        Changes {
            dir: super::vaider_dir(project).join("local/review"),
        }
    }

    /// `<project>/.vaider/local/review`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of one change.
    pub fn change_dir(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// A new change's folder, created, with the gitignore of `.vaider/`.
    pub fn create_dir(&self, id: &str) -> Result<PathBuf> {
        check_id(id)?;
        let dir = self.change_dir(id);
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
        if let Some(vaider) = self.dir.parent().and_then(Path::parent) {
            let _ = vaider_core::config::write_project_gitignore(vaider);
        }
        Ok(dir)
    }

    /// One change by its id.
    pub fn get(&self, id: &str) -> Result<PendingChange> {
        check_id(id)?;
        let path = self.change_dir(id).join("change.json");
        let bytes = std::fs::read(&path).map_err(|_| {
            ReviewError(format!(
                "no change {id:?} in {}: list them with `vaider review list`",
                self.dir.display()
            ))
        })?;
        serde_json::from_slice(&bytes).map_err(|e| {
            ReviewError(format!(
                "{} is not a change ({e}); remove its folder and capture again",
                path.display()
            ))
        })
    }

    /// Keeps a change (replacing its file).
    pub fn save(&self, change: &PendingChange) -> Result<()> {
        let dir = self.create_dir(&change.id)?;
        let mut json = serde_json::to_vec_pretty(change).unwrap_or_default();
        json.push(b'\n');
        write_atomic(&dir.join("change.json"), &json)?;
        Ok(())
    }

    /// Every change kept, newest first (unreadable folders are skipped).
    pub fn all(&self) -> Vec<PendingChange> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut all: Vec<PendingChange> = entries
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("change.json")).ok())
            .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
            .collect();
        all.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
        all
    }

    /// The changes still waiting for a decision, newest first.
    pub fn pending(&self) -> Vec<PendingChange> {
        self.all()
            .into_iter()
            .filter(|c| c.state == ChangeState::Pending)
            .collect()
    }

    /// Removes the pending changes of a baseline other than `keep`: a newer capture replaces
    /// them (an unchanged one closes them).
    pub fn drop_pending_of(&self, baseline: &Path, keep: Option<&str>) {
        for change in self.pending() {
            if change.baseline == baseline && Some(change.id.as_str()) != keep {
                let _ = std::fs::remove_dir_all(self.change_dir(&change.id));
            }
        }
    }

    /// Held while a decision reads and writes the baselines and the log.
    pub(crate) fn lock(&self) -> Result<ReviewLock> {
        std::fs::create_dir_all(&self.dir).map_err(|e| io_error("create", &self.dir, e))?;
        let path = self.dir.join(".lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_error("open", &path, e))?;
        file.lock().map_err(|e| io_error("lock", &path, e))?;
        Ok(ReviewLock(file))
    }
}

pub(crate) struct ReviewLock(File);

impl Drop for ReviewLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// A change's id, from what makes it this change: where its baseline is and the new picture.
pub fn change_id(baseline: &Path, actual_hash: &str) -> String {
    let key = format!("{}\n{actual_hash}", baseline.display());
    super::sha256(key.as_bytes())["sha256:".len()..][..12].to_string()
}

/// An id is 12 hex digits: never a path.
fn check_id(id: &str) -> Result<()> {
    if id.len() == 12 && id.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(ReviewError(format!(
            "{id:?} is not a change id (12 hex digits): list the changes with `vaider review list`"
        )))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A pending new capture of `baseline`, for the review's unit tests.
    pub(crate) fn change(id: &str, created: &str, baseline: &Path) -> PendingChange {
        PendingChange {
            id: id.into(),
            name: "home".into(),
            variant: "400x300".into(),
            source: ChangeSource::Vaider,
            status: BaselineStatus::New,
            state: ChangeState::Pending,
            baseline: baseline.to_path_buf(),
            actual: PathBuf::from("/x/actual.png"),
            diff_image: None,
            annotated: None,
            heat_map: None,
            close_ups: None,
            changed_pixels: 0,
            regions: Vec::new(),
            verdicts: Vec::new(),
            summary: None,
            expected_changes: Vec::new(),
            proposed_ignore: Vec::new(),
            ignored: Vec::new(),
            interaction_id: None,
            created: created.into(),
            decided_by: None,
        }
    }

    #[test]
    fn changes_are_listed_newest_first_and_a_newer_capture_replaces_a_pending_one() {
        let project = tempfile::tempdir().unwrap();
        let changes = Changes::in_project(project.path());
        let base = project.path().join(".vaider/baselines/home@400x300.png");
        let (a, b) = (change_id(&base, "1"), change_id(&base, "2"));
        changes
            .save(&change(&a, "2026-11-28T10:00:00Z", &base))
            .unwrap();
        changes
            .save(&change(&b, "2026-11-28T11:00:00Z", &base))
            .unwrap();
        let ids: Vec<String> = changes.pending().into_iter().map(|c| c.id).collect();
        assert_eq!(ids, [b.clone(), a.clone()]);
        changes.drop_pending_of(&base, Some(&b));
        assert_eq!(changes.pending().len(), 1);
        assert_eq!(changes.get(&b).unwrap().id, b);
    }

    #[test]
    fn an_id_is_never_a_path() {
        let project = tempfile::tempdir().unwrap();
        let changes = Changes::in_project(project.path());
        for bad in ["../../etc", "", "abc"] {
            let err = changes.get(bad).unwrap_err();
            assert!(err.to_string().contains("vaider review list"), "{err}");
        }
    }
}
