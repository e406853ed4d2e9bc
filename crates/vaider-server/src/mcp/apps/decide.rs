//! `vaider_view_decide`: the review view's Approve and Reject buttons. Offered to views only
//! (`visibility: ["app"]`), and even so it decides nothing without the one-time grant the view
//! was given for that change ([`super::grant`]): the model's own `tools/call`, which never
//! saw a grant, is refused. The decision itself is `vaider_visual::review`'s, recorded as a
//! click in the client's chat view (`vaider_core::person::Proof::ClickedInChatView`).

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{json, Value};
use vaider_core::analysis::Door;
use vaider_core::person::Decision;
use vaider_core::Vaider;
use vaider_visual::review;

use super::{grant, refusal, ViewContext};

/// The view's decide tool.
pub const TOOL: &str = "vaider_view_decide";

/// The tool's definition, offered to views only.
pub fn tool() -> Value {
    json!({
        "name": TOOL,
        "title": "Decide on a visual change (Vaider's review view)",
        "description": "For Vaider's review view only: the user's click on Approve or Reject. \
                        It needs the one-time grant the view was given; without it nothing \
                        changes. Agents propose decisions with review_approve or review_reject.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": { "type": "string", "description": "The pending change's id." },
                "decision": { "type": "string", "enum": ["approve", "reject"] },
                "grant": { "type": "string", "description": "The view's one-time grant for this change." },
                "reason": { "type": "string", "description": "Why, if the user said." }
            },
            "required": ["id", "decision", "grant"]
        },
        "_meta": { "ui": { "resourceUri": super::views::REVIEW.uri(), "visibility": ["app"] } }
    })
}

#[derive(Deserialize)]
struct Args {
    id: String,
    decision: String,
    grant: String,
    #[serde(default)]
    reason: String,
}

/// Approves or rejects the change the grant is for, as the user's click.
pub async fn call(engine: &Vaider, arguments: Value, view: &ViewContext) -> CallToolResult {
    let Ok(args) = serde_json::from_value::<Args>(arguments) else {
        return refusal("Give `id`, `decision` (approve or reject) and the view's `grant`.".into());
    };
    let approve = match args.decision.as_str() {
        "approve" => true,
        "reject" => false,
        other => return refusal(format!("`decision` is approve or reject, not {other:?}.")),
    };
    let granted = match grant::redeem(&args.grant, &args.id) {
        Ok(granted) => granted,
        Err(refused) => return refusal(format!("Nothing changed. {refused}")),
    };
    let decision = Decision::clicked_in_chat_view(&view.client);
    let project = granted.project;
    let decided = if approve {
        review::approve(&project, &args.id, &decision, &args.reason)
    } else {
        review::reject(&project, &args.id, &decision, &args.reason)
    };
    let record = match decided {
        Ok(record) => record,
        Err(e) => return refusal(e.to_string()),
    };
    if let Err(error) =
        review::decide::record_in_history(engine, &project, &record, Door::Mcp).await
    {
        tracing::warn!(%error, "a review decision made in a chat view is not in the history");
    }
    let sentence = format!(
        "The user {} the change {} ({}@{}) in the chat view.",
        review::decide::action_word(record.action),
        record.change,
        record.name,
        record.variant
    );
    let mut result =
        CallToolResult::success(vec![rmcp::model::ContentBlock::text(sentence.clone())]);
    result.structured_content = Some(json!({
        "success": true,
        "data": record,
        "summary": sentence,
    }));
    result
}

/// The review view's data for the changes `review_pending` lists: per change, its one-time
/// grant and the signed paths of the pictures it has.
pub fn view_data(
    project: &std::path::Path,
    changes: &[review::PendingChange],
) -> serde_json::Map<String, Value> {
    let mut listed = serde_json::Map::new();
    for change in changes {
        let mut pictures = serde_json::Map::new();
        for which in ["baseline", "actual", "diff"] {
            if review::picture(project, change, which).is_some_and(|p| p.is_file()) {
                pictures.insert(
                    which.into(),
                    json!(super::media::review_picture(project, &change.id, which)),
                );
            }
        }
        listed.insert(
            change.id.clone(),
            json!({ "grant": grant::issue(project, &change.id), "pictures": pictures }),
        );
    }
    let mut data = serde_json::Map::new();
    data.insert("changes".into(), Value::Object(listed));
    data
}
