//! The person's side of running plan files: `vaider plan approve` (a plan's address, hosts and
//! secrets, asked at the terminal), the question `vaider plan run` asks before it runs a plan
//! nobody approved, and `vaider plan secret set|clear` (a plan's secret value in the plan
//! secrets' own keychain service). What counts as a person is `vaider_core::person`.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use vaider_core::person::Decision;
use vaider_core::Vaider;
use vaider_qa::service::{self, Unapproved};

/// `vaider plan secret …`.
#[derive(Subcommand)]
pub enum SecretAction {
    /// Store a plan's secret value (read hidden at a terminal, or from standard input) as the
    /// keychain entry NAME, which a plan names as `{"keychain": "NAME"}`.
    Set { name: String },
    /// Remove it.
    Clear { name: String },
}

/// `vaider plan approve PLAN [--yes]`: shows what the plan reaches and records the approval.
pub fn approve(engine: &Vaider, workspace: &Path, plan_id: &str, yes: bool) -> ExitCode {
    let unapproved = match service::needs_approval(engine, workspace, plan_id) {
        Ok(Some(unapproved)) => unapproved,
        Ok(None) => {
            println!("The plan {plan_id} may run already: Vaider wrote it, or you approved what it reaches.");
            return ExitCode::SUCCESS;
        }
        Err(error) => return crate::plan::report(&error),
    };
    let decision = match yes {
        true => Some(Decision::on_command_line()),
        false => ask(&unapproved),
    };
    let Some(decision) = decision else {
        eprintln!("vaider: not approved; the plan {plan_id} will not run until it is");
        return ExitCode::FAILURE;
    };
    match service::approve_plan(engine, workspace, plan_id, decision) {
        Ok(approved) => {
            println!("Approved: the plan {:?} may now run.", approved.plan_name);
            ExitCode::SUCCESS
        }
        Err(error) => crate::plan::report(&error),
    }
}

/// The approval `vaider plan run` needs for this plan, asked at the terminal: Ok(None) when
/// it needs none, Err with the exit code when it cannot run.
pub fn approval_for_run(
    engine: &Vaider,
    workspace: &Path,
    plan_id: &str,
) -> Result<Option<Decision>, ExitCode> {
    let Ok(Some(unapproved)) = service::needs_approval(engine, workspace, plan_id) else {
        // Approved, or not there: the run says which.
        return Ok(None);
    };
    match ask(&unapproved) {
        Some(decision) => Ok(Some(decision)),
        None => Err(crate::plan::report(
            &unapproved.refusal("it was not approved at this terminal"),
        )),
    }
}

/// The question, asked at this process's terminal; None without a terminal or on anything but
/// yes.
fn ask(unapproved: &Unapproved) -> Option<Decision> {
    let decision = Decision::at_terminal();
    if decision.is_none() {
        eprintln!(
            "vaider: approving a plan needs you at a terminal (this one is a pipe or a script). Run `{}` in a terminal, or add --yes to approve it from your own script",
            unapproved.approve_command
        );
        return None;
    }
    eprint!("{} [y/N] ", unapproved.question());
    std::io::stderr().flush().ok()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
        .then_some(decision)
        .flatten()
}

/// `vaider plan secret set|clear NAME`.
pub async fn secret(action: SecretAction) -> Result<ExitCode> {
    let outcome = match action {
        SecretAction::Set { name } => {
            let value = read_value(&name)?;
            let stored = name.clone();
            tokio::task::spawn_blocking(move || {
                vaider_core::secrets::plan_secret_set(&stored, value.trim_end_matches(['\r', '\n']))
            })
            .await?
            .map(|()| format!("Stored the plan secret {name} in the keychain (service vaider-plan-secrets). A plan reads it with \"secrets\": {{\"NAME\": {{\"keychain\": \"{name}\"}}}}."))
        }
        SecretAction::Clear { name } => {
            let removed = name.clone();
            tokio::task::spawn_blocking(move || vaider_core::secrets::plan_secret_delete(&removed))
                .await?
                .map(|()| format!("Removed the plan secret {name} from the keychain."))
        }
    };
    Ok(match outcome {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("vaider: {error}");
            ExitCode::FAILURE
        }
    })
}

/// The value as typed (hidden) on a terminal, or all of standard input when it is piped in.
fn read_value(name: &str) -> Result<String> {
    if std::io::stdin().is_terminal() {
        return Ok(rpassword::prompt_password(format!(
            "The value of the plan secret {name} (input hidden): "
        ))?);
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    Ok(text)
}
