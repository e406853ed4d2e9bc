//! How the MCP door learns a client's workspace roots, on either revision, for the one
//! workspace rule of `vaider_core::workspace`. A 2025 session asks with `roots/list` (a request
//! to the client on the session); on 2026-07-28 there are no server-to-client requests, so the
//! tool call answers `input_required` with a `roots/list` input request and the client retries
//! the call with the roots as `inputResponses`. Either way the same folders come back, so a
//! relative path resolves the same. Roots are asked only when the call needs a workspace and
//! names no `cwd`, and only from a client that declared the `roots` capability.
// Roots are deprecated by 2026-07-28 (SEP-2577), yet they are how the clients in the field
// say where they work; the `cwd` argument is the way forward and wins when given.
#![allow(deprecated)]

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListRootsRequest, ListRootsResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use vaider_core::workspace::{folders_of_roots, Workspace};

use super::VaiderMcp;

/// The key of the roots request in an `input_required` answer.
const ROOTS_INPUT: &str = "roots";
/// How long a 2025 client may take to list its roots.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(3);

/// What a tool call needs to know about its workspace.
pub(super) struct Need<'a> {
    /// The call's `cwd` argument (blank when not given).
    pub cwd: &'a str,
    /// Whether anything in the call depends on a workspace (a relative path, a store).
    pub needed: bool,
}

impl Need<'_> {
    /// For calls whose only workspace need is resolving these sources.
    pub(super) fn for_sources<'a>(cwd: &'a str, sources: &[&str]) -> Need<'a> {
        Need {
            cwd,
            needed: sources
                .iter()
                .any(|s| vaider_core::workspace::is_relative_to_workspace(s)),
        }
    }

    /// For calls that always work in a project folder (the visual and QA stores).
    pub(super) fn always(cwd: &str) -> Need<'_> {
        Need { cwd, needed: true }
    }
}

impl VaiderMcp {
    /// The call's workspace, or the `input_required` answer that asks a 2026-07-28 client for
    /// its roots first. `answers` are the call's `inputResponses` (a retry's).
    pub(super) async fn workspace(
        &self,
        ctx: &RequestContext<RoleServer>,
        answers: Option<&InputResponses>,
        need: Need<'_>,
    ) -> Result<Workspace, InputRequiredResult> {
        let roots = if !need.needed || !need.cwd.trim().is_empty() {
            Vec::new()
        } else if is_stateless(ctx) {
            match answers.and_then(|a| a.get(ROOTS_INPUT)) {
                Some(answer) => roots_of(answer),
                None if offers_roots(ctx) => return Err(ask_for_roots()),
                None => Vec::new(),
            }
        } else {
            session_roots(ctx).await
        };
        let workspace = Workspace::of(Some(need.cwd), roots);
        Ok(match self.stdio {
            true => workspace.for_own_server(),
            false => workspace,
        })
    }
}

/// The answer of a call that works in a project folder: `work`'s result in the folder found,
/// or the answer sent instead (roots asked of a 2026-07-28 client, no workspace at all).
pub(super) async fn answer_in<F, Fut>(
    folder: Result<PathBuf, CallToolResponse>,
    work: F,
) -> Result<CallToolResponse, ErrorData>
where
    F: FnOnce(PathBuf) -> Fut,
    Fut: Future<Output = CallToolResult>,
{
    Ok(match folder {
        Ok(folder) => work(folder).await.into(),
        Err(early) => early,
    })
}

/// Whether this request is of the stateless revision (its version is in its own `_meta`).
pub(super) fn is_stateless(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.meta
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn offers_roots(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .is_some_and(|capabilities| capabilities.roots.is_some())
}

/// The answer that asks for the client's roots; the client retries the call with them.
fn ask_for_roots() -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        ROOTS_INPUT.to_string(),
        InputRequest::ListRoots(ListRootsRequest::default()),
    );
    InputRequiredResult::from_input_requests(requests)
}

/// The folders of a `roots/list` answer sent back as an input response; anything else (a
/// malformed answer, a refusal) is no roots.
fn roots_of(answer: &serde_json::Value) -> Vec<PathBuf> {
    match serde_json::from_value::<ListRootsResult>(answer.clone()) {
        Ok(list) => folders_of_roots(list.roots.iter().map(|root| root.uri.as_str())),
        Err(_) => Vec::new(),
    }
}

/// A 2025 session's roots, asked on the session (`roots/list`), when the client offers them.
async fn session_roots(ctx: &RequestContext<RoleServer>) -> Vec<PathBuf> {
    if !offers_roots(ctx) {
        return Vec::new();
    }
    match tokio::time::timeout(ROOTS_TIMEOUT, ctx.peer.list_roots()).await {
        Ok(Ok(list)) => folders_of_roots(list.roots.iter().map(|root| root.uri.as_str())),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_roots_request_is_a_roots_list_input_request() {
        let asked = serde_json::to_value(ask_for_roots()).unwrap();
        assert_eq!(asked["resultType"], "input_required");
        assert_eq!(asked["inputRequests"]["roots"]["method"], "roots/list");
    }

    #[test]
    fn a_roots_answer_gives_its_folders_and_a_bad_one_none() {
        let answer = json!({"roots": [{"uri": "file:///work/app", "name": "app"},
                                      {"uri": "file:///work/a%20b"}]});
        assert_eq!(
            roots_of(&answer),
            [PathBuf::from("/work/app"), PathBuf::from("/work/a b")]
        );
        assert!(roots_of(&json!({"action": "decline"})).is_empty());
        assert!(roots_of(&json!("nope")).is_empty());
    }
}
