//! `resources/list` and `resources/read`: Vaider's resources are its chat views
//! (`ui://vaider/…`, [`super::apps::views`]), listed to every client so that a host can fetch
//! and review them before any tool runs. On 2026-07-28 both answers carry the caching hints
//! the revision asks for (`ttlMs`, `cacheScope`); 2025 revisions define none and get none.
//! A view's `_meta.ui.csp` names the loopback origin the client reached Vaider on, the one
//! place its media load from; over stdio it names none (media then travel as data).

use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, ResultType,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

use super::apps::{self, views};

/// How long a client may keep a view or the list: they change only with Vaider's version.
const VIEWS_TTL_MS: u64 = 5 * 60 * 1000;

/// Whether this request's revision defines caching hints (2026-07-28 and later).
fn wants_hints(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Every view, with its type and what it shows.
pub fn list(ctx: &RequestContext<RoleServer>) -> ListResourcesResult {
    let resources = views::VIEWS
        .iter()
        .filter_map(|view| {
            serde_json::from_value::<Resource>(json!({
                "uri": view.uri(),
                "name": view.name,
                "title": view.title,
                "description": view.description,
                "mimeType": apps::MIME_TYPE,
            }))
            .ok()
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    result.result_type = Some(ResultType::COMPLETE);
    if wants_hints(ctx) {
        result.ttl_ms = Some(VIEWS_TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
    }
    result
}

/// No templates: the views are fixed addresses. The list exists (with its hints) because a
/// server with resources answers it.
pub fn templates(ctx: &RequestContext<RoleServer>) -> ListResourceTemplatesResult {
    let mut result = ListResourceTemplatesResult::with_all_items(Vec::new());
    if wants_hints(ctx) {
        result.ttl_ms = Some(VIEWS_TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
    }
    result
}

/// One view's page, or -32602 with the address asked for (as SEP-2164 says).
pub fn read(
    request: &ReadResourceRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Result<ReadResourceResult, ErrorData> {
    let Some(view) = views::at(&request.uri) else {
        return Err(ErrorData::invalid_params(
            format!(
                "No resource {:?}: Vaider's resources are its views, {}.",
                request.uri,
                views::VIEWS
                    .iter()
                    .map(|v| v.uri())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(json!({ "uri": request.uri })),
        ));
    };
    let origins: Vec<String> = apps::ViewContext::origin_of(ctx).into_iter().collect();
    let contents = serde_json::from_value::<ResourceContents>(json!({
        "uri": view.uri(),
        "mimeType": apps::MIME_TYPE,
        "text": view.html(),
        "_meta": { "ui": {
            "csp": { "resourceDomains": origins, "connectDomains": origins },
            "prefersBorder": true,
        }},
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut result = ReadResourceResult::new(vec![contents]);
    if wants_hints(ctx) {
        // Private: the page names the origin this client reached Vaider on.
        result.ttl_ms = Some(VIEWS_TTL_MS);
        result.cache_scope = Some(CacheScope::Private);
    }
    Ok(result)
}
