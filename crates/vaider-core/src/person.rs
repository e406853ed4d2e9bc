//! A person's decision: what proves that the user, not an agent holding the token, decided
//! something. Some things only the user may decide: running a plan file that Vaider did not
//! write (its address, hosts and secrets), approving a visual change, a click in a chat view.
//! This module is the one definition; SECURITY.md says the same in words.
//!
//! Three things prove a person, and nothing else does:
//! - an answer typed at an interactive terminal (`vaider plan approve`, a prompt of
//!   `vaider plan run`): standard input and standard error are both terminals;
//! - the web UI or the tray app's window, signed in through a one-time login code;
//! - an answer the MCP client collected from its user and sent back (elicitation on
//!   2025-11-25, an input-required result on 2026-07-28), which rests on the client showing
//!   the question to its user rather than to the model;
//! - a click in a view the MCP client showed in its chat (MCP Apps), carrying the one-time
//!   grant that only the view was given, which rests on the host keeping the view's data
//!   and the view's own tools away from the model.
//!
//! The user's own command line (`vaider plan approve ID --yes`, for CI and scripts) is taken
//! as theirs too: it is not a door an agent reaches over MCP or REST.
//!
//! The bearer token alone (REST, or a model's own `tools/call`) never proves a person. What is
//! out of reach: an agent with a shell on the user's machine can do whatever the user can
//! (edit files, run the CLI at a pseudo-terminal), so the promise is about MCP and REST, not
//! about the user's own shell.

use std::fmt;
use std::io::IsTerminal;

use serde::{Deserialize, Serialize};

/// How a person showed they decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Proof {
    /// Answered at an interactive terminal.
    Terminal,
    /// Given on the user's own command line without a question (`--yes`, for CI).
    CommandLine,
    /// Clicked in the web UI or the tray app's window, signed in through a login code.
    SignedInUi,
    /// Answered in the MCP client, which asked its user (elicitation or input-required).
    AskedThroughClient {
        /// The client's name as it introduced itself (`clientInfo.name`).
        client: String,
    },
    /// Clicked in a view the MCP client showed in its chat, with the view's one-time grant.
    ClickedInChatView {
        /// The client's name as it introduced itself (`clientInfo.name`).
        client: String,
    },
}

/// A decision a person made: how it was proven, by which OS user, and when. Only the
/// constructors below make one, each at the door that holds the proof; a door that only holds
/// the token has none to call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub proof: Proof,
    /// The OS user the decision was made as.
    pub user: String,
    /// RFC 3339.
    pub at: String,
}

impl Decision {
    /// A decision taken at this process's terminal, or None when it has none (a pipe, CI, an
    /// agent's tool call): the question cannot be put to a person here.
    pub fn at_terminal() -> Option<Decision> {
        let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        interactive.then(|| Decision::new(Proof::Terminal))
    }

    /// The user's own command, given with `--yes` where no terminal can ask (CI, a script).
    pub fn on_command_line() -> Decision {
        Decision::new(Proof::CommandLine)
    }

    /// A click in the UI, for a request the guard found signed in through a login code.
    pub fn signed_in_ui() -> Decision {
        Decision::new(Proof::SignedInUi)
    }

    /// An answer the MCP client `client` collected from its user.
    pub fn asked_through_client(client: &str) -> Decision {
        Decision::new(Proof::AskedThroughClient {
            client: client_name(client),
        })
    }

    /// A click in a view the MCP client `client` showed, whose one-time grant the door
    /// checked.
    pub fn clicked_in_chat_view(client: &str) -> Decision {
        Decision::new(Proof::ClickedInChatView {
            client: client_name(client),
        })
    }

    fn new(proof: Proof) -> Decision {
        Decision {
            proof,
            user: os_user(),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match &self.proof {
            Proof::Terminal => "at a terminal".to_string(),
            Proof::CommandLine => "on the command line (--yes)".to_string(),
            Proof::SignedInUi => "in Vaider's window".to_string(),
            Proof::AskedThroughClient { client } => format!("when {client} asked"),
            Proof::ClickedInChatView { client } => format!("in {client}'s chat view"),
        };
        write!(f, "{} {how}, {}", self.user, self.at)
    }
}

/// A client's name as a record keeps it: trimmed, at most 80 characters, never blank.
fn client_name(client: &str) -> String {
    match client.trim() {
        "" => "an MCP client".to_string(),
        name => name.chars().take(80).collect(),
    }
}

/// The OS user this process runs as, by name.
pub fn os_user() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .map(|name| name.trim().to_string())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "an unnamed user".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_process_has_no_terminal_to_ask_at() {
        // nextest and CI give no terminal: the question cannot be put to a person here.
        if !std::io::stdin().is_terminal() {
            assert!(Decision::at_terminal().is_none());
        }
    }

    #[test]
    fn a_decision_says_who_how_and_when() {
        let decision = Decision::asked_through_client("claude-code");
        let text = decision.to_string();
        assert!(text.contains("when claude-code asked"), "{text}");
        assert!(text.contains(&decision.at), "{text}");
        let long = Decision::asked_through_client(&"x".repeat(500));
        assert!(matches!(long.proof, Proof::AskedThroughClient { client } if client.len() == 80));
    }
}
