//! Plans and runs as JSON files in the project's `.qa-agent/` folder, as contracts.md §3 keeps
//! them: `plans/<project>/<planId>.json` and `runs/<runId>.json`, each run's step screenshots in
//! `runs/<runId>/`. Every file is written through a temporary file renamed into place, so a
//! reader (or a crash) never meets half a plan. Files another tool wrote in this format are
//! listed and run like Vaider's own; a file that is not a plan is skipped, not fatal.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use vaider_core::atomic_file;

use crate::plan::{RunStatus, TestPlan, TestRun};

/// A store operation that failed, with what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no test plan {0:?} in this project's .qa-agent/plans; list_test_plans shows the plans there")]
    PlanNotFound(String),
    #[error(
        "no test run {0:?} in this project's .qa-agent/runs; list_test_runs shows the runs there"
    )]
    RunNotFound(String),
    #[error("{0:?} is not an id: use letters, digits, '-' and '_' only")]
    BadId(String),
    #[error("cannot write {path}: {source}; check that the project folder is writable and the disk has room (nothing partial was left)", path = path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a readable {what}: {reason}", path = path.display())]
    Unreadable {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },
}

/// The `.qa-agent/` folder of one project.
#[derive(Debug, Clone)]
pub struct QaStore {
    root: PathBuf,
}

impl QaStore {
    pub fn in_project(project: &Path) -> QaStore {
        QaStore {
            root: project.join(".qa-agent"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Keeps a plan under its project's folder.
    pub fn save_plan(&self, plan: &TestPlan) -> Result<PathBuf, StoreError> {
        check_id(&plan.id)?;
        let path = self
            .root
            .join("plans")
            .join(project_folder(&plan.project.name))
            .join(format!("{}.json", plan.id));
        write_json(&path, plan)?;
        Ok(path)
    }

    /// The plan with this id, in whichever project folder it is.
    pub fn plan(&self, id: &str) -> Result<(TestPlan, PathBuf), StoreError> {
        check_id(id)?;
        let name = format!("{id}.json");
        for project in subfolders(&self.root.join("plans")) {
            let path = project.join(&name);
            if path.is_file() {
                return Ok((read_json(&path, "test plan")?, path));
            }
        }
        Err(StoreError::PlanNotFound(id.to_string()))
    }

    /// Every readable plan, newest first; only `project`'s when given.
    pub fn plans(&self, project: Option<&str>) -> Vec<(TestPlan, PathBuf)> {
        let mut plans: Vec<(TestPlan, PathBuf)> = subfolders(&self.root.join("plans"))
            .into_iter()
            .flat_map(|folder| json_files(&folder))
            .filter_map(|path| Some((read_json::<TestPlan>(&path, "test plan").ok()?, path)))
            .filter(|(plan, _)| project.is_none_or(|p| plan.project.name == p))
            .collect();
        plans.sort_by(|a, b| b.0.created_at.cmp(&a.0.created_at));
        plans
    }

    pub fn save_run(&self, run: &TestRun) -> Result<PathBuf, StoreError> {
        check_id(&run.id)?;
        let path = self.root.join("runs").join(format!("{}.json", run.id));
        write_json(&path, run)?;
        Ok(path)
    }

    pub fn run(&self, id: &str) -> Result<TestRun, StoreError> {
        check_id(id)?;
        let path = self.root.join("runs").join(format!("{id}.json"));
        if !path.is_file() {
            return Err(StoreError::RunNotFound(id.to_string()));
        }
        read_json(&path, "test run")
    }

    /// Every readable run, newest first, of one plan and in one status when given.
    pub fn runs(&self, plan_id: Option<&str>, status: Option<RunStatus>) -> Vec<TestRun> {
        let mut runs: Vec<TestRun> = json_files(&self.root.join("runs"))
            .iter()
            .filter_map(|path| read_json::<TestRun>(path, "test run").ok())
            .filter(|run| plan_id.is_none_or(|p| run.plan_id == p))
            .filter(|run| status.is_none_or(|s| run.status == s))
            .collect();
        runs.sort_by(|a, b| b.started_at.cmp(&a.started_at));
        runs
    }

    /// Where a run's step screenshots go.
    pub fn run_folder(&self, run_id: &str) -> PathBuf {
        self.root.join("runs").join(run_id)
    }

    /// Where a plan's writing keeps what the model was shown (the app's first page).
    pub fn generation_folder(&self, job_id: &str) -> PathBuf {
        self.root.join("generation").join(job_id)
    }
}

/// Plans, runs and steps are named by ids that become file names: nothing that could leave
/// the folder.
fn check_id(id: &str) -> Result<(), StoreError> {
    let fine = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match fine {
        true => Ok(()),
        false => Err(StoreError::BadId(id.to_string())),
    }
}

/// A project's name as a folder name: lower case, `-` for anything else.
pub fn project_folder(name: &str) -> String {
    let folder: String = name
        .trim()
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_lowercase(),
            false => '-',
        })
        .collect();
    let folder = folder.trim_matches('-').to_string();
    match folder.is_empty() {
        true => "default".into(),
        false => folder,
    }
}

fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    folders
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn read_json<T: DeserializeOwned>(path: &Path, what: &'static str) -> Result<T, StoreError> {
    let unreadable = |reason: String| StoreError::Unreadable {
        path: path.to_path_buf(),
        what,
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| unreadable(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))
}

/// Writes a file of the store whole or not at all (vaider_core::atomic_file), its folder made
/// first, synced to the disk: a plan or a run cannot be made again.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let error = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(error)?;
    atomic_file::write(path, bytes, atomic_file::Sync::ToDisk).map_err(error)
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Project;

    fn plan(id: &str, project: &str, created: &str) -> TestPlan {
        TestPlan {
            id: id.into(),
            name: format!("plan {id}"),
            description: String::new(),
            project: Project {
                name: project.into(),
                repo_url: None,
                description: None,
            },
            prompt: "a user can log in".into(),
            base_url: "http://localhost:3000".into(),
            allowed_hosts: Vec::new(),
            steps: Vec::new(),
            created_at: created.into(),
            updated_at: created.into(),
            context: None,
            secrets: Default::default(),
        }
    }

    #[test]
    fn plans_are_kept_by_project_and_found_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = QaStore::in_project(dir.path());
        let path = store
            .save_plan(&plan("p1", "My Shop", "2026-01-01"))
            .unwrap();
        assert!(path.ends_with(".qa-agent/plans/my-shop/p1.json"));
        store.save_plan(&plan("p2", "admin", "2026-02-01")).unwrap();
        // A hand-written file that is not a plan is skipped.
        std::fs::write(dir.path().join(".qa-agent/plans/admin/notes.json"), "{}").unwrap();
        let all: Vec<String> = store.plans(None).into_iter().map(|(p, _)| p.id).collect();
        assert_eq!(all, ["p2", "p1"]);
        let shop: Vec<String> = store
            .plans(Some("My Shop"))
            .into_iter()
            .map(|(p, _)| p.id)
            .collect();
        assert_eq!(shop, ["p1"]);
        assert_eq!(store.plan("p2").unwrap().0.project.name, "admin");
        assert!(matches!(store.plan("p9"), Err(StoreError::PlanNotFound(_))));
        assert!(matches!(store.plan("../p1"), Err(StoreError::BadId(_))));
        // Nothing temporary is left beside the files.
        let left: Vec<_> = std::fs::read_dir(dir.path().join(".qa-agent/plans/my-shop"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["p1.json"]);
    }

    #[test]
    fn a_plan_that_cannot_be_written_says_so_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the plans folder should be.
        std::fs::write(dir.path().join(".qa-agent"), "in the way").unwrap();
        let store = QaStore::in_project(dir.path());
        let error = store.save_plan(&plan("p1", "shop", "x")).unwrap_err();
        assert!(error.to_string().contains("writable"), "{error}");
    }
}
