//! Which plan files may run. A plan decides where the browser goes (its `baseUrl` and
//! `allowedHosts`) and which secret values are read for it (`secrets`); a plan that arrived
//! with a cloned repository must not decide that for the user. So a plan runs only when that
//! reach (the three fields together) is one Vaider wrote itself for this user, or one a person
//! approved ([`vaider_core::person`]). The record is a file in Vaider's data folder, keyed by a
//! hash of the reach: editing a plan's steps keeps its approval, a change to its address,
//! hosts or secrets asks again. Overriding the base URL for one run (a local dev server) needs
//! no new approval: secrets stay bound to the origin the approval named. The doors ask
//! [`needs_approval`], show the person the [`Unapproved`] plan, and record [`approve_plan`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use vaider_core::person::Decision;
use vaider_core::Vaider;

use crate::error::{ErrorCode, QaError};
use crate::plan::TestPlan;
use crate::store::QaStore;

/// The file of approvals in the data folder.
const FILE: &str = "plan-approvals.json";
/// Keeps the file's read-modify-write whole within one process.
static WRITING: Mutex<()> = Mutex::new(());

/// One plan reach that may run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// [`reach_hash`] of the plan.
    pub reach: String,
    pub plan_id: String,
    /// The plan's file when it was approved.
    pub path: String,
    /// `written` (Vaider wrote the plan) or the person's decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    pub at: String,
}

/// The approvals kept in a data folder.
#[derive(Debug, Clone)]
pub struct PlanApprovals {
    file: PathBuf,
}

impl PlanApprovals {
    pub fn in_data_dir(data_dir: &Path) -> PlanApprovals {
        PlanApprovals {
            file: data_dir.join(FILE),
        }
    }

    /// Whether this plan's reach may run.
    pub fn allows(&self, plan: &TestPlan) -> bool {
        let reach = reach_hash(plan);
        self.read().iter().any(|a| a.reach == reach)
    }

    /// Records a plan Vaider itself wrote for this user.
    pub fn record_written(&self, plan: &TestPlan, path: &Path) -> Result<(), String> {
        self.add(plan, path, None)
    }

    /// Records a person's approval of the plan's reach.
    pub fn approve(&self, plan: &TestPlan, path: &Path, decision: Decision) -> Result<(), String> {
        self.add(plan, path, Some(decision))
    }

    fn add(&self, plan: &TestPlan, path: &Path, decision: Option<Decision>) -> Result<(), String> {
        let _one_at_a_time = WRITING.lock().unwrap_or_else(|p| p.into_inner());
        let mut approvals = self.read();
        let reach = reach_hash(plan);
        approvals.retain(|a| !(a.reach == reach && a.plan_id == plan.id));
        approvals.push(Approval {
            reach,
            plan_id: plan.id.clone(),
            path: path.display().to_string(),
            decision,
            at: vaider_core::pipeline::now_rfc3339(),
        });
        let bytes = serde_json::to_vec_pretty(&approvals).unwrap_or_default();
        if let Some(dir) = self.file.parent() {
            vaider_core::atomic_file::create_private_dir(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let sync = vaider_core::atomic_file::Sync::ToDisk;
        vaider_core::atomic_file::write(&self.file, &bytes, sync)
            .map_err(|e| format!("cannot keep the approval in {}: {e}", self.file.display()))
    }

    /// Every approval; a missing or unreadable file approves nothing.
    pub fn read(&self) -> Vec<Approval> {
        std::fs::read(&self.file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }
}

/// The sha256 of what a plan reaches: its base URL, its allowed hosts and its secrets (where
/// each is read, its origin and fields), in one canonical JSON.
pub fn reach_hash(plan: &TestPlan) -> String {
    let reach = json!({
        "baseUrl": plan.base_url.trim(),
        "allowedHosts": plan.allowed_hosts,
        "secrets": plan.secrets,
    });
    hex::encode(Sha256::digest(reach.to_string().as_bytes()))
}

/// What a person approves, in lines: the address, the hosts and each secret with where it is
/// read and where it may be typed.
pub fn reach_lines(plan: &TestPlan) -> Vec<String> {
    let base_origin =
        crate::secret_values::origin_of(&plan.base_url).unwrap_or_else(|| plan.base_url.clone());
    let mut lines = vec![format!("opens {}", plan.base_url.trim())];
    match plan.allowed_hosts.is_empty() {
        true => lines.push(format!("may go to {base_origin} only")),
        false => lines.push(format!("may also go to: {}", plan.allowed_hosts.join(", "))),
    }
    for (name, from) in &plan.secrets {
        let source = match (&from.env, &from.keychain) {
            (Some(var), _) => format!("the environment variable {var}"),
            (None, Some(entry)) => format!("the keychain entry {entry} (vaider-plan-secrets)"),
            (None, None) => "nowhere (the plan names no source)".into(),
        };
        let origin = from.origin.clone().unwrap_or_else(|| base_origin.clone());
        let fields = match from.fields.is_empty() {
            true => "password fields".to_string(),
            false => format!("password fields and {}", from.fields.join(", ")),
        };
        lines.push(format!(
            "reads the secret {name} from {source}, typed only into {fields} on {origin}"
        ));
    }
    lines
}

/// The command that approves the plan at a terminal.
pub fn approve_command(plan_id: &str, project: &Path) -> String {
    format!(
        "{} plan approve {plan_id} --dir {}",
        vaider_core::updates::cli_command(),
        shell_word(&project.display().to_string())
    )
}

fn shell_word(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c));
    match plain && !text.is_empty() {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

/// A plan that needs a person's approval before it runs: what to show them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unapproved {
    pub plan_id: String,
    pub plan_name: String,
    pub path: String,
    /// What the plan reaches, a line each (its address, hosts and secrets).
    pub reach: Vec<String>,
    /// The command that approves it at a terminal.
    pub approve_command: String,
}

impl Unapproved {
    /// The question put to a person, whole.
    pub fn question(&self) -> String {
        format!(
            "Vaider did not write the test plan {:?} ({}), and nobody approved what it reaches:\n- {}\nRun it with these?",
            self.plan_name,
            self.path,
            self.reach.join("\n- ")
        )
    }

    /// PLAN_NOT_APPROVED, with the command that approves it.
    pub fn refusal(&self, how: &str) -> QaError {
        QaError::new(
            ErrorCode::PlanNotApproved,
            format!(
                "the plan {} was not written by Vaider and its address, hosts and secrets were never approved by you: {how}. Approve it at a terminal with `{}` (or in Vaider's window), then run it again",
                self.path, self.approve_command
            ),
        )
        .with_details(json!(self))
    }
}

/// The plan `plan_id` of `workspace` when it needs a person's approval to run, else None.
pub fn needs_approval(
    engine: &Vaider,
    workspace: &Path,
    plan_id: &str,
) -> Result<Option<Unapproved>, QaError> {
    let (plan, path) = QaStore::in_project(workspace).plan(plan_id.trim())?;
    Ok(unapproved(engine, &plan, &path, workspace))
}

pub(crate) fn unapproved(
    engine: &Vaider,
    plan: &TestPlan,
    path: &Path,
    project: &Path,
) -> Option<Unapproved> {
    let approvals = PlanApprovals::in_data_dir(engine.data_dir());
    (!approvals.allows(plan)).then(|| Unapproved::of(plan, path, project))
}

impl Unapproved {
    /// What a person is shown of `plan`, kept at `path` in `project`.
    fn of(plan: &TestPlan, path: &Path, project: &Path) -> Unapproved {
        Unapproved {
            plan_id: plan.id.clone(),
            plan_name: plan.name.clone(),
            path: path.display().to_string(),
            reach: reach_lines(plan),
            approve_command: approve_command(&plan.id, project),
        }
    }
}

/// Records a person's approval of the plan `plan_id` (`vaider plan approve`, the UI).
pub fn approve_plan(
    engine: &Vaider,
    workspace: &Path,
    plan_id: &str,
    decision: vaider_core::person::Decision,
) -> Result<Unapproved, QaError> {
    let (plan, path) = QaStore::in_project(workspace).plan(plan_id.trim())?;
    let approved = Unapproved::of(&plan, &path, workspace);
    PlanApprovals::in_data_dir(engine.data_dir())
        .approve(&plan, &path, decision)
        .map_err(|e| QaError::new(ErrorCode::StorageError, e))?;
    Ok(approved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret_values::SecretRef;

    fn plan() -> TestPlan {
        serde_json::from_value(json!({
            "id": "login", "name": "Login", "project": {"name": "shop"},
            "baseUrl": "http://localhost:3000", "steps": [],
            "createdAt": "2026-11-28T10:00:00Z", "updatedAt": "2026-11-28T10:00:00Z"
        }))
        .unwrap()
    }

    #[test]
    fn an_approval_holds_while_the_reach_is_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let approvals = PlanApprovals::in_data_dir(dir.path());
        let mut plan = plan();
        assert!(!approvals.allows(&plan));
        approvals
            .approve(
                &plan,
                Path::new("p.json"),
                Decision::asked_through_client("t"),
            )
            .unwrap();
        assert!(approvals.allows(&plan));
        // New steps or a new name keep it.
        plan.name = "Log in".into();
        assert!(approvals.allows(&plan));
        // A new host, address or secret asks again.
        for change in 0..3 {
            let mut changed = plan.clone();
            match change {
                0 => changed.allowed_hosts = vec!["*".into()],
                1 => changed.base_url = "http://127.0.0.1:4000".into(),
                _ => {
                    changed.secrets.insert(
                        "PASSWORD".into(),
                        SecretRef {
                            env: Some("SHOP_PASSWORD".into()),
                            keychain: None,
                            origin: None,
                            fields: Vec::new(),
                        },
                    );
                }
            }
            assert!(!approvals.allows(&changed), "change {change}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn the_reach_is_said_in_words_and_the_command_is_quoted() {
        let mut plan = plan();
        plan.secrets.insert(
            "PIN".into(),
            SecretRef {
                env: None,
                keychain: Some("shop-pin".into()),
                origin: None,
                fields: vec!["#pin".into()],
            },
        );
        let lines = reach_lines(&plan).join("\n");
        assert!(lines.contains("opens http://localhost:3000"), "{lines}");
        assert!(lines.contains("the keychain entry shop-pin"), "{lines}");
        assert!(
            lines.contains("password fields and #pin on http://localhost:3000"),
            "{lines}"
        );
        assert_eq!(
            approve_command("login", Path::new("/home/a b/shop")),
            "vaider plan approve login --dir '/home/a b/shop'"
        );
    }
}
