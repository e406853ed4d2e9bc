//! A person's decisions on pending changes: approve (the new picture becomes the baseline),
//! reject (the baseline stays), undo (the last decision reverted, the baseline file restored).
//! Each takes a `Decision`, the proof that a person made it; the token alone never makes one.
//! Every decision is a line of `.vaider/baselines/decisions.jsonl` (committed with the
//! baselines: who, when, why, how it was proven) and, through `record_in_history`, a row of
//! the history.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vaider_core::person::{Decision, Proof};

use super::baselines::{BaselineKey, BaselineMeta, Baselines};
use super::changes::{ChangeSource, ChangeState, Changes, PendingChange};
use super::{io_error, Result, ReviewError};
use crate::store::write_atomic;

/// What a decision did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    Approved,
    Rejected,
    /// The last decision reverted.
    Undone,
}

/// One line of the decisions log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    pub id: String,
    pub action: Action,
    /// The change decided on.
    pub change: String,
    pub name: String,
    pub variant: String,
    /// The baseline, relative to the project when it is inside it.
    pub baseline: String,
    pub reason: String,
    /// The OS user.
    pub user: String,
    /// `git config user.name`, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_user: Option<String>,
    /// RFC 3339.
    pub at: String,
    pub proof: Proof,
    /// For an undo: the decision it reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
}

/// `.vaider/baselines/decisions.jsonl`.
pub fn log_path(project: &Path) -> PathBuf {
    Baselines::in_project(project).dir().join("decisions.jsonl")
}

/// Every decision taken in the project, oldest first (lines that are not one are skipped).
pub fn decisions(project: &Path) -> Vec<DecisionRecord> {
    std::fs::read_to_string(log_path(project))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Approves a pending change: its picture becomes the baseline (a Vaider baseline with the
/// proposed ignore regions, or the Playwright snapshot file), the change is closed.
pub fn approve(
    project: &Path,
    id: &str,
    decision: &Decision,
    reason: &str,
) -> Result<DecisionRecord> {
    close(
        project,
        id,
        Action::Approved,
        decision,
        reason,
        |changes, change, record| {
            keep_previous(changes, change, &record.id)?;
            let png =
                std::fs::read(&change.actual).map_err(|e| io_error("read", &change.actual, e))?;
            match &change.source {
                ChangeSource::Vaider => write_vaider_baseline(project, change, &png, decision),
                ChangeSource::Playwright { .. } => write_snapshot(&change.baseline, &png),
            }
        },
    )
}

/// Rejects a pending change: the baseline stays as it is, the change is closed as rejected.
pub fn reject(
    project: &Path,
    id: &str,
    decision: &Decision,
    reason: &str,
) -> Result<DecisionRecord> {
    close(
        project,
        id,
        Action::Rejected,
        decision,
        reason,
        |_, _, _| Ok(()),
    )
}

/// Closes a pending change with a decision: under the review lock, `act` does what the
/// decision does to the baseline, then the change is closed and the decision logged.
fn close(
    project: &Path,
    id: &str,
    action: Action,
    decision: &Decision,
    reason: &str,
    act: impl FnOnce(&Changes, &PendingChange, &DecisionRecord) -> Result<()>,
) -> Result<DecisionRecord> {
    let changes = Changes::in_project(project);
    let _lock = changes.lock()?;
    let mut change = open_change(&changes, id)?;
    let record = new_record(project, &change, action, decision, reason);
    act(&changes, &change, &record)?;
    change.state = match action {
        Action::Approved => ChangeState::Approved,
        _ => ChangeState::Rejected,
    };
    change.decided_by = Some(record.id.clone());
    changes.save(&change)?;
    append(project, &record)?;
    Ok(record)
}

/// Reverts the last decision not yet undone: an approval puts the previous baseline back (or
/// removes the one it created), and the change is pending again.
pub fn undo(project: &Path, decision: &Decision, reason: &str) -> Result<DecisionRecord> {
    let changes = Changes::in_project(project);
    let _lock = changes.lock()?;
    let log = decisions(project);
    let undone: Vec<&str> = log.iter().filter_map(|r| r.undoes.as_deref()).collect();
    let last = log
        .iter()
        .rev()
        .find(|r| r.action != Action::Undone && !undone.contains(&r.id.as_str()))
        .ok_or_else(|| ReviewError("there is no decision to undo".into()))?;
    let mut change = changes.get(&last.change)?;
    if last.action == Action::Approved {
        restore_previous(&changes, &change, &last.id)?;
    }
    change.state = ChangeState::Pending;
    change.decided_by = None;
    changes.save(&change)?;
    let mut record = new_record(project, &change, Action::Undone, decision, reason);
    record.undoes = Some(last.id.clone());
    append(project, &record)?;
    Ok(record)
}

fn open_change(changes: &Changes, id: &str) -> Result<PendingChange> {
    let change = changes.get(id)?;
    if change.state != ChangeState::Pending {
        return Err(ReviewError(format!(
            "the change {id} was already {}; undo it first with `vaider review undo`",
            match change.state {
                ChangeState::Approved => "approved",
                _ => "rejected",
            }
        )));
    }
    Ok(change)
}

fn new_record(
    project: &Path,
    change: &PendingChange,
    action: Action,
    decision: &Decision,
    reason: &str,
) -> DecisionRecord {
    let baseline = change
        .baseline
        .strip_prefix(project)
        .unwrap_or(&change.baseline)
        .display()
        .to_string();
    DecisionRecord {
        id: vaider_core::job::new_id()[..16].to_string(),
        action,
        change: change.id.clone(),
        name: change.name.clone(),
        variant: change.variant.clone(),
        baseline,
        reason: reason.trim().chars().take(2000).collect(),
        user: decision.user.clone(),
        git_user: git_user(project),
        at: decision.at.clone(),
        proof: decision.proof.clone(),
        undoes: None,
    }
}

/// `git config user.name` in the project, when git is there and has one.
fn git_user(project: &Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .args(["config", "user.name"])
        .current_dir(project)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let name = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.status.success() && !name.is_empty()).then_some(name)
}

/// The baseline an approval replaces, kept in the change's folder for undo (`previous.png`,
/// `previous.json`), or a marker that there was none.
fn keep_previous(changes: &Changes, change: &PendingChange, decision: &str) -> Result<()> {
    let dir = before_dir(changes, change, decision);
    std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
    if let Ok(png) = std::fs::read(&change.baseline) {
        write_atomic(&dir.join("previous.png"), &png)?;
    }
    if let Ok(meta) = std::fs::read(change.baseline.with_extension("json")) {
        if change.source == ChangeSource::Vaider {
            write_atomic(&dir.join("previous.json"), &meta)?;
        }
    }
    Ok(())
}

/// Where an approval keeps the baseline it replaced.
fn before_dir(changes: &Changes, change: &PendingChange, decision: &str) -> PathBuf {
    changes
        .change_dir(&change.id)
        .join(format!("before-{decision}"))
}

fn restore_previous(changes: &Changes, change: &PendingChange, decision: &str) -> Result<()> {
    let dir = before_dir(changes, change, decision);
    let meta = change.baseline.with_extension("json");
    match std::fs::read(dir.join("previous.png")) {
        Ok(png) => write_atomic(&change.baseline, &png)?,
        Err(_) => {
            let _ = std::fs::remove_file(&change.baseline);
        }
    }
    if change.source == ChangeSource::Vaider {
        match std::fs::read(dir.join("previous.json")) {
            Ok(json) => write_atomic(&meta, &json)?,
            Err(_) => {
                let _ = std::fs::remove_file(&meta);
            }
        }
    }
    Ok(())
}

fn write_vaider_baseline(
    project: &Path,
    change: &PendingChange,
    png: &[u8],
    decision: &Decision,
) -> Result<()> {
    let baselines = Baselines::in_project(project);
    let key = BaselineKey::new(&change.name, &change.variant)?;
    let (width, height) = crate::store::png_dimensions(png)?;
    // What the baseline ignored before still holds; what was learned now is added.
    let mut ignore_regions = baselines
        .meta(&key)
        .map(|m| m.ignore_regions)
        .unwrap_or_default();
    for area in &change.proposed_ignore {
        if !ignore_regions.contains(area) {
            ignore_regions.push(area.clone());
        }
    }
    let meta = BaselineMeta {
        name: change.name.clone(),
        variant: change.variant.clone(),
        width,
        height,
        hash: super::sha256(png),
        approved_at: decision.at.clone(),
        approved_by: decision.user.clone(),
        ignore_regions,
    };
    baselines.write(&key, png, &meta)
}

fn write_snapshot(path: &Path, png: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
    }
    write_atomic(path, png)?;
    Ok(())
}

fn append(project: &Path, record: &DecisionRecord) -> Result<()> {
    Baselines::in_project(project).ensure()?;
    let path = log_path(project);
    let mut line = serde_json::to_string(record).unwrap_or_default();
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| io_error("open", &path, e))?;
    file.write_all(line.as_bytes())
        .map_err(|e| io_error("write", &path, e))
}

/// Keeps a decision in the history too, as a finished job (`review_decision`) whose result is
/// the record: the history shows who decided what, beside the model's verdict it came after.
pub async fn record_in_history(
    engine: &vaider_core::Vaider,
    project: &Path,
    record: &DecisionRecord,
    door: vaider_core::Door,
) -> Result<()> {
    let source = format!(
        "{} {}@{}",
        action_word(record.action),
        record.name,
        record.variant
    );
    let job = engine
        .start_job(vaider_core::job::JobStart {
            id: vaider_core::job::new_id(),
            tool: "review_decision",
            door,
            source: &source,
            expectations: &[],
            log_dir: None,
            project: Some(project),
        })
        .await
        .map_err(not_in_history)?;
    let description = format!("{source} by {}: {}", record.user, record.reason);
    let result = serde_json::to_value(record).unwrap_or_default();
    job.finish(description, result, vaider_core::job::Verdict::Passed, None)
        .await
        .map_err(not_in_history)
}

fn not_in_history(error: impl std::fmt::Display) -> ReviewError {
    ReviewError(format!(
        "the decision is logged, but not in the history: {error}"
    ))
}

pub fn action_word(action: Action) -> &'static str {
    match action {
        Action::Approved => "approved",
        Action::Rejected => "rejected",
        Action::Undone => "undid",
    }
}
