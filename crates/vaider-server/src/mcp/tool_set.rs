//! Which of the tools a client is offered. Every tool definition a client lists is sent to its
//! model with each request (Gemini CLI: all of them, every turn), so a client may ask for a
//! smaller set: `?tools=core` in the MCP URL, or `vaider stdio --tools core`. Names are groups
//! or tool names, comma-separated (`core,qa`, `analyze_video,vaider_status`). A tool outside
//! the set is neither listed nor callable. Unknown names are refused with the list of known
//! ones, so a typo in a client config is seen at once rather than silently serving all tools.

use std::collections::BTreeSet;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;

/// The groups a `tools=` value may name, with their tools.
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "core",
        &[
            "analyze_video",
            "analyze_image",
            "ui_diff_check",
            "visual_capture",
            "visual_compare",
            "validate_test",
            "vaider_status",
        ],
    ),
    (
        "vision",
        &[
            "analyze_video",
            "analyze_image",
            "ui_to_artifact",
            "extract_text_from_screenshot",
            "diagnose_error_screenshot",
            "understand_technical_diagram",
            "analyze_data_visualization",
            "ui_diff_check",
        ],
    ),
    (
        "visual",
        &[
            "visual_capture",
            "visual_compare",
            "visual_prepare",
            "visual_cleanup",
        ],
    ),
    (
        "review",
        &["review_pending", "review_approve", "review_reject"],
    ),
    ("tests", &["validate_test", "analyse_test_results"]),
    (
        "qa",
        &[
            "generate_test_plan",
            "run_test_plan",
            "list_test_plans",
            "list_test_runs",
            "get_test_run",
        ],
    ),
    ("status", &["vaider_status"]),
];

/// A set of tool names; `All` when the client asked for no subset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolSet {
    #[default]
    All,
    Only(BTreeSet<String>),
}

impl ToolSet {
    /// Parses `core`, `core,qa`, `analyze_video, vaider_status`; `all` (or nothing) is every
    /// tool. `known` is every tool the server has.
    pub fn parse(spec: &str, known: &[&str]) -> Result<ToolSet, String> {
        let mut chosen = BTreeSet::new();
        let mut unknown = Vec::new();
        for name in spec.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "all" {
                return Ok(ToolSet::All);
            }
            match GROUPS.iter().find(|(group, _)| *group == name) {
                Some((_, tools)) => chosen.extend(tools.iter().map(|t| t.to_string())),
                None if known.contains(&name) => {
                    chosen.insert(name.to_string());
                }
                None => unknown.push(name.to_string()),
            }
        }
        if !unknown.is_empty() {
            let groups: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
            return Err(format!(
                "unknown tool set {}: use all, a group ({}) or tool names ({}), comma-separated",
                unknown.join(", "),
                groups.join(", "),
                known.join(", ")
            ));
        }
        Ok(if chosen.is_empty() {
            ToolSet::All
        } else {
            ToolSet::Only(chosen)
        })
    }

    pub fn contains(&self, tool: &str) -> bool {
        match self {
            ToolSet::All => true,
            ToolSet::Only(names) => names.contains(tool),
        }
    }
}

/// The `tools` parameter of a URL's query, if any (`?tools=core&x=1`), percent-decoded.
fn tools_parameter(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        (name == "tools").then(|| vaider_core::source::percent_decode(&value.replace('+', " ")))
    })
}

/// Middleware for `/mcp`: reads `?tools=`, refuses an unknown name with 400, and hands the
/// set to the tool handlers as a request extension (rmcp passes the HTTP request's parts on).
pub async fn from_query(mut request: Request, next: Next) -> Response {
    let Some(spec) = request.uri().query().and_then(tools_parameter) else {
        return next.run(request).await;
    };
    match ToolSet::parse(&spec, &super::tool_names()) {
        Ok(set) => {
            request.extensions_mut().insert(set);
            next.run(request).await
        }
        Err(message) => ApiError::new(
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            format!("The MCP URL's ?tools= is wrong: {message}."),
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &[
        "analyze_video",
        "analyze_image",
        "ui_diff_check",
        "visual_capture",
        "visual_compare",
        "validate_test",
        "vaider_status",
        "get_test_run",
    ];

    #[test]
    fn groups_and_names_combine() {
        let set = ToolSet::parse("core, get_test_run", KNOWN).unwrap();
        for tool in ["analyze_video", "vaider_status", "get_test_run"] {
            assert!(set.contains(tool), "{tool}");
        }
        assert!(!set.contains("visual_cleanup"));
        assert_eq!(ToolSet::parse("", KNOWN), Ok(ToolSet::All));
        assert_eq!(ToolSet::parse("core,all", KNOWN), Ok(ToolSet::All));
    }

    #[test]
    fn an_unknown_name_is_refused_with_what_is_known() {
        let error = ToolSet::parse("core,analyse_vidoe", KNOWN).unwrap_err();
        assert!(error.contains("analyse_vidoe"), "{error}");
        assert!(error.contains("core, vision"), "{error}");
        assert!(error.contains("analyze_video"), "{error}");
    }

    #[test]
    fn the_query_parameter_is_found_and_decoded() {
        assert_eq!(tools_parameter("tools=core"), Some("core".into()));
        assert_eq!(
            tools_parameter("a=1&tools=core%2Cqa"),
            Some("core,qa".into())
        );
        assert_eq!(tools_parameter("toolsx=1"), None);
    }
}
