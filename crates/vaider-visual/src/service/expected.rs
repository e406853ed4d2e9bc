//! `visual_prepare`: the changes the next comparison should find, kept in the store until a
//! comparison uses them.

use std::path::{Path, PathBuf};

use super::CompareError;
use crate::store::{write_atomic, Store};

/// The file `visual_prepare` keeps the declared changes in, for the next comparison.
pub(super) fn declared_path(store: &Store) -> PathBuf {
    store.root().join("expected-changes.json")
}

/// `visual_prepare`: keeps the changes the next comparison should find.
pub fn declare_expected(project: &Path, changes: &[String]) -> Result<Vec<String>, CompareError> {
    let store = Store::in_project(project);
    let path = declared_path(&store);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| CompareError(format!("cannot create {}: {e}", dir.display())))?;
    }
    let kept: Vec<String> = changes
        .iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    let json = serde_json::to_vec_pretty(&kept).unwrap_or_default();
    write_atomic(&path, &json).map_err(|e| CompareError(e.to_string()))?;
    Ok(kept)
}

/// The declared changes, for the next comparison (which removes them once it succeeded).
pub(super) fn read_declared(store: &Store) -> Vec<String> {
    std::fs::read(declared_path(store))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}
