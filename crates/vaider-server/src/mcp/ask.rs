//! Asking the user a yes-or-no question through the MCP client, for the decisions only a person
//! may make (`vaider_core::person`): on 2025-11-25 an `elicitation/create` request on the
//! session; on 2026-07-28, which has no server-to-client requests, an `input_required` answer
//! carrying the same elicitation, which the client answers by calling the tool again with
//! `inputResponses`. A client without the elicitation capability cannot ask, and the door
//! refuses with the command or page that asks instead.
//!
//! How far this holds rests on the client: Vaider cannot see whether the client showed the
//! question to its user or let the model answer it. The token alone (a raw HTTP caller) can
//! forge an answer as well as any client could; SECURITY.md says so.

use std::time::Duration;

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests,
};
use rmcp::model::{InputRequiredResult, InputResponses};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::{json, Value};
use vaider_core::person::Decision;

use super::workspace::is_stateless;

/// How long a 2025 client's user may take to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What asking gave.
pub(super) enum Asked {
    /// The user said yes.
    Yes(Decision),
    /// The user said no, or dismissed the question.
    No,
    /// Ask on 2026-07-28: send this, and the client calls again with the answer.
    Pending(Box<InputRequiredResult>),
    /// This client cannot put a question to its user.
    CannotAsk,
}

/// Asks the user `question` (yes or no) under `key`, through whichever way this request's
/// revision has. `answers` are the call's `inputResponses` (a retry's).
pub(super) async fn yes_or_no(
    ctx: &RequestContext<RoleServer>,
    answers: Option<&InputResponses>,
    key: &str,
    question: &str,
) -> Asked {
    if !offers_elicitation(ctx) {
        return Asked::CannotAsk;
    }
    let client = client_name(ctx);
    let answered = |answer: ElicitResult| match said_yes(&answer) {
        true => Asked::Yes(Decision::asked_through_client(&client)),
        false => Asked::No,
    };
    if is_stateless(ctx) {
        return match answers.and_then(|a| a.get(key)) {
            Some(answer) => match serde_json::from_value::<ElicitResult>(answer.clone()) {
                Ok(answer) => answered(answer),
                Err(_) => Asked::No,
            },
            None => match input_request(key, question) {
                Some(asked) => Asked::Pending(Box::new(asked)),
                None => Asked::CannotAsk,
            },
        };
    }
    let Some(params) = params(question) else {
        return Asked::CannotAsk;
    };
    // Inside a task, the task waits in `input_required` meanwhile.
    let asking = ctx
        .peer
        .create_elicitation_with_timeout(params, Some(ANSWER_TIMEOUT));
    match super::tasks::while_asking(asking).await {
        Ok(answer) => answered(answer),
        Err(error) => {
            tracing::info!(%error, "the client did not answer the question put to its user");
            Asked::No
        }
    }
}

/// An accepted answer whose `approve` is true.
fn said_yes(answer: &ElicitResult) -> bool {
    answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            == Some(true)
}

/// The form: one required yes-or-no field, `approve`, off unless the user turns it on.
fn form(question: &str) -> Value {
    json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Yes: Vaider may do this. No: it is refused.",
                    "default": false
                }
            },
            "required": ["approve"]
        }
    })
}

fn params(question: &str) -> Option<ElicitRequestParams> {
    serde_json::from_value(form(question)).ok()
}

/// The `input_required` answer carrying the elicitation under `key`.
fn input_request(key: &str, question: &str) -> Option<InputRequiredResult> {
    let request = json!({"method": "elicitation/create", "params": form(question)});
    let request: InputRequest = serde_json::from_value(request).ok()?;
    let mut requests = InputRequests::new();
    requests.insert(key.to_string(), request);
    Some(InputRequiredResult::from_input_requests(requests))
}

fn offers_elicitation(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .is_some_and(|capabilities| capabilities.elicitation.is_some())
}

fn client_name(ctx: &RequestContext<RoleServer>) -> String {
    ctx.client_info().map(|info| info.name).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_is_an_elicitation_with_one_boolean() {
        let asked =
            serde_json::to_value(input_request("approve_plan", "Run it?").unwrap()).unwrap();
        assert_eq!(asked["resultType"], "input_required");
        let request = &asked["inputRequests"]["approve_plan"];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Run it?");
        assert_eq!(
            request["params"]["requestedSchema"]["properties"]["approve"]["type"],
            "boolean"
        );
        assert!(params("Run it?").is_some());
    }

    #[test]
    fn only_an_accepted_true_is_a_yes() {
        let answer = |v: Value| serde_json::from_value::<ElicitResult>(v).unwrap();
        assert!(said_yes(&answer(
            json!({"action": "accept", "content": {"approve": true}})
        )));
        for no in [
            json!({"action": "accept", "content": {"approve": false}}),
            json!({"action": "accept", "content": {"approve": "true"}}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"action": "cancel"}),
        ] {
            assert!(!said_yes(&answer(no.clone())), "{no}");
        }
    }
}
