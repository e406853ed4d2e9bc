//! Keeping a project config that holds the token itself (`vaider init --inline-token`) out of
//! version control.

use std::path::Path;

use crate::error::{Result, VaiderError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitIgnore {
    /// The config's path was added to this `.gitignore`.
    Added(std::path::PathBuf),
    /// This `.gitignore` already listed it.
    AlreadyListed(std::path::PathBuf),
    /// The project is not inside a git repository: nothing to ignore it in.
    NotARepository,
    /// The config is the user's own, outside any project.
    UserFile,
}

/// Adds `relative` (the client's config) to the `.gitignore` in `project` when `project` is
/// inside a git repository (a `.git` folder, or the `.git` file of a worktree, here or above).
pub(super) fn ignore_in_git(project: &Path, relative: &str) -> Result<GitIgnore> {
    let absolute = std::path::absolute(project).unwrap_or_else(|_| project.to_path_buf());
    if !absolute.ancestors().any(|dir| dir.join(".git").exists()) {
        return Ok(GitIgnore::NotARepository);
    }
    let gitignore = project.join(".gitignore");
    // Anchored to the .gitignore's folder, so a file of that name deeper down is not ignored.
    let entry = format!("/{relative}");
    let existing = match std::fs::read_to_string(&gitignore) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(VaiderError::internal(
                format!("read {}", gitignore.display()),
                e,
            ))
        }
    };
    let listed = existing
        .lines()
        .map(str::trim)
        .any(|line| line == entry || line == relative);
    if listed {
        return Ok(GitIgnore::AlreadyListed(gitignore));
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Holds the Vaider token (written by `vaider init --inline-token`)\n");
    text.push_str(&entry);
    text.push('\n');
    std::fs::write(&gitignore, text)
        .map_err(|e| VaiderError::internal(format!("write {}", gitignore.display()), e))?;
    Ok(GitIgnore::Added(gitignore))
}
