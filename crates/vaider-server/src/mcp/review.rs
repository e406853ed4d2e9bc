//! The review loop's tools (docs/review.md): `review_pending` lists a project's pending
//! changes; `review_approve` and `review_reject` let an agent propose a decision that only the
//! user makes. Agents ask; people decide: the question goes to the user through the client
//! (`ask::yes_or_no`), and without an answer from them nothing changes; the token alone never
//! approves. The decisions themselves are `vaider_visual::review`'s.

use std::path::Path;

use rmcp::handler::server::tool::InputResponses as Answers;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use vaider_core::analysis::Door;
use vaider_visual::review::{self, PendingChange};

use super::apps::{self, ViewContext};
use super::ask::{self, Asked};
use super::visual::envelope;
use super::workspace::answer_in;
use super::VaiderMcp;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewPendingArgs {
    /// The project folder whose .vaider/ holds the changes, when the client has no roots.
    #[serde(default)]
    pub cwd: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewDecideArgs {
    /// The pending change's id, as review_pending or visual_capture gave it. The user decides:
    /// Vaider asks them through your client, and without their yes nothing changes (if the
    /// client cannot ask, they decide in the review page, `vaider ui` #/review, or with
    /// `vaider review approve ID`).
    pub id: String,
    /// Why, in a sentence: kept in the project's decisions log.
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub cwd: String,
}

/// The key of the decision question in an `input_required` answer.
const DECIDE: &str = "review_decision";

#[tool_router(router = review_tools, vis = "pub(super)")]
impl VaiderMcp {
    /// List the pending visual changes (captures unlike their baseline), newest first.
    #[tool(name = "review_pending")]
    async fn review_pending(
        &self,
        Parameters(args): Parameters<ReviewPendingArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let view = ViewContext::of(&ctx);
        let project = self.project(&ctx, answers, &args.cwd).await;
        answer_in(project, |project| async move {
            pending(&project, view.as_ref())
        })
        .await
    }

    /// Propose approving a pending change as the new baseline; Vaider asks the user to decide.
    #[tool(name = "review_approve")]
    async fn review_approve(
        &self,
        Parameters(args): Parameters<ReviewDecideArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.decide(args, answers, ctx, true).await
    }

    /// Propose rejecting a pending change (the baseline stays); Vaider asks the user to decide.
    #[tool(name = "review_reject")]
    async fn review_reject(
        &self,
        Parameters(args): Parameters<ReviewDecideArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.decide(args, answers, ctx, false).await
    }
}

impl VaiderMcp {
    /// Asks the user, then approves or rejects with their decision; or the answer to send
    /// instead (the question on 2026-07-28, a refusal).
    async fn decide(
        &self,
        args: ReviewDecideArgs,
        answers: Option<rmcp::model::InputResponses>,
        ctx: RequestContext<RoleServer>,
        approve: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let retried = answers.clone();
        let project = match self.project(&ctx, answers, &args.cwd).await {
            Ok(project) => project,
            Err(early) => return Ok(early),
        };
        let change = match review::Changes::in_project(&project).get(&args.id) {
            Ok(change) => change,
            Err(e) => return Ok(envelope(Err(e.to_string()), String::new()).into()),
        };
        let verb = if approve { Verb::Approve } else { Verb::Reject };
        let question = question(&change, verb, &args.reason);
        let decision = match ask::yes_or_no(&ctx, retried.as_ref(), DECIDE, &question).await {
            Asked::Yes(decision) => decision,
            Asked::No => {
                return Ok(refused(&change, verb, "you declined when your client asked").into())
            }
            Asked::Pending(question) => return Ok(CallToolResponse::from(*question)),
            Asked::CannotAsk => {
                return Ok(refused(
                    &change,
                    verb,
                    "this MCP client cannot ask you (it offers no elicitation)",
                )
                .into())
            }
        };
        let decided = if approve {
            review::approve(&project, &change.id, &decision, &args.reason)
        } else {
            review::reject(&project, &change.id, &decision, &args.reason)
        };
        let record = match decided {
            Ok(record) => record,
            Err(e) => return Ok(envelope(Err(e.to_string()), String::new()).into()),
        };
        let sentence =
            match review::decide::record_in_history(&self.engine, &project, &record, Door::Mcp)
                .await
            {
                Ok(()) => format!(
                    "The user {} the change {} ({}@{}).",
                    review::decide::action_word(record.action),
                    change.id,
                    change.name,
                    change.variant
                ),
                Err(e) => e.to_string(),
            };
        let data = serde_json::to_value(&record).unwrap_or_default();
        Ok(envelope(Ok(data), sentence).into())
    }
}

/// `review_pending`: the changes, each as a line for the agent and as data with its paths;
/// for a client that shows views, the review view's grants and pictures beside.
fn pending(project: &Path, view: Option<&ViewContext>) -> CallToolResult {
    let changes = review::Changes::in_project(project).pending();
    let mut sentence = match changes.len() {
        0 => "No pending changes.".to_string(),
        n => format!("{n} pending change(s), newest first:"),
    };
    for change in &changes {
        sentence.push('\n');
        sentence.push_str(&line(change));
    }
    let listed: Vec<_> = changes.iter().map(|c| summary(project, c)).collect();
    let mut result = envelope(Ok(json!({ "changes": listed })), sentence);
    if let Some(view) = view {
        apps::attach(&mut result, view, apps::review_view_data(project, &changes));
    }
    result
}

/// One change as data: what the agent reads, without the bulky fields; its pictures only
/// where the review loop keeps them (`review::picture`, the page's rule too).
fn summary(project: &Path, change: &PendingChange) -> serde_json::Value {
    let path = |which| review::picture(project, change, which);
    json!({
        "id": change.id,
        "name": change.name,
        "variant": change.variant,
        "status": change.status,
        "created": change.created,
        "changedPixels": change.changed_pixels,
        "regions": change.regions,
        "verdicts": change.verdicts,
        "summary": change.summary,
        "baseline": path("baseline"),
        "actual": path("actual"),
        "diffImage": path("diff"),
        "annotated": path("annotated"),
    })
}

/// "3f2a… home@1280x800 changed, 5120 pixels: region 1 regression (the button moved)".
fn line(change: &PendingChange) -> String {
    let mut text = format!(
        "{} {}@{} {}, {} pixels",
        change.id,
        change.name,
        change.variant,
        change.status.as_str(),
        change.changed_pixels
    );
    let verdicts = verdicts(change);
    if !verdicts.is_empty() {
        text.push_str(": ");
        text.push_str(&verdicts);
    }
    text
}

fn verdicts(change: &PendingChange) -> String {
    change
        .verdicts
        .iter()
        .map(|v| format!("region {} {} ({})", v.region, v.verdict, v.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What the agent proposes.
#[derive(Clone, Copy)]
enum Verb {
    Approve,
    Reject,
}

impl Verb {
    /// The word of the command (`vaider review approve`).
    fn word(self) -> &'static str {
        match self {
            Verb::Approve => "approve",
            Verb::Reject => "reject",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Verb::Approve => "approved",
            Verb::Reject => "rejected",
        }
    }
}

/// The question put to the user: the change, what the model said, what the agent proposes.
fn question(change: &PendingChange, verb: Verb, reason: &str) -> String {
    let model = match verdicts(change) {
        v if v.is_empty() => "no verdict from the model".to_string(),
        v => format!("the model says: {v}"),
    };
    let why = match reason.trim() {
        "" => String::new(),
        r => format!(" The agent's reason: {r}."),
    };
    let (asked, yes) = match verb {
        Verb::Approve => ("Approve", "the new picture becomes the baseline"),
        Verb::Reject => ("Reject", "the change is rejected and the baseline kept"),
    };
    format!(
        "{asked} the visual change {} of {}@{} ({}, {} pixels changed; {model})? Yes: {yes}.{why}",
        change.id,
        change.name,
        change.variant,
        change.status.as_str(),
        change.changed_pixels,
    )
}

/// Nothing changed, and how the user decides instead.
fn refused(change: &PendingChange, verb: Verb, why: &str) -> CallToolResult {
    let (word, done) = (verb.word(), verb.done());
    let message = format!(
        "Not {done}: deciding on a visual change is the user's, and {why}. Nothing changed. \
         The user can {word} it in the review page (`vaider ui`, page #/review) or at a \
         terminal with `vaider review {word} {}`.",
        change.id
    );
    envelope(Err(message), String::new())
}
