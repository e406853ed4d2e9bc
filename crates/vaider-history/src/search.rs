//! The history view's questions: text search, filters and cursor pages, newest first, and
//! the values present for the filters. Kept apart from the store's writes.

use serde::Serialize;

use super::{row_to_interaction, History, Interaction, Status, COLUMNS};
use vaider_base::error::Result;

/// What the history view asks for: text search and filters, newest first, a page at a time.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Case-insensitive text in the source, prompt, description, model or error.
    pub text: Option<String>,
    pub status: Option<Status>,
    pub tool: Option<String>,
    pub project: Option<String>,
    /// The `next` cursor of the page before.
    pub before: Option<String>,
    pub limit: usize,
}

/// One page of a [`Query`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub items: Vec<Interaction>,
    /// Pass back as `before` for the next page; none on the last page.
    pub next: Option<String>,
    /// Every match, not only this page.
    pub total: u64,
}

/// The values present in the history, for the view's filters.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    pub tools: Vec<String>,
    pub projects: Vec<String>,
    pub statuses: Vec<Status>,
}

impl History {
    /// One page of the history view: filtered, searched, newest first.
    pub fn search(&self, query: &Query) -> Result<Page> {
        let mut conditions: Vec<&str> = Vec::new();
        let mut values: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(text) = query
            .text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            conditions.push(
                "(source LIKE ?N ESCAPE '\\' OR prompt LIKE ?N ESCAPE '\\'
                  OR description LIKE ?N ESCAPE '\\' OR model LIKE ?N ESCAPE '\\'
                  OR error_message LIKE ?N ESCAPE '\\' OR tool LIKE ?N ESCAPE '\\')",
            );
            values.push(like_pattern(text).into());
        }
        if let Some(status) = query.status {
            conditions.push("status = ?N");
            values.push(status.as_str().to_string().into());
        }
        if let Some(tool) = query.tool.as_deref().filter(|t| !t.is_empty()) {
            conditions.push("tool = ?N");
            values.push(tool.to_string().into());
        }
        if let Some(project) = query.project.as_deref().filter(|p| !p.is_empty()) {
            conditions.push("project = ?N");
            values.push(project.to_string().into());
        }
        // Numbered parameters, so one search text can be used in several places.
        let mut filter = String::new();
        for (i, condition) in conditions.iter().enumerate() {
            filter.push_str(if i == 0 { " WHERE " } else { " AND " });
            filter.push_str(&condition.replace("?N", &format!("?{}", i + 1)));
        }
        let mut page_filter = filter.clone();
        let mut page_values = values.clone();
        if let Some((created_at, id)) = query.before.as_deref().and_then(|b| b.split_once('|')) {
            let n = page_values.len();
            page_filter.push_str(if page_filter.is_empty() {
                " WHERE "
            } else {
                " AND "
            });
            page_filter.push_str(&format!("(created_at, id) < (?{}, ?{})", n + 1, n + 2));
            page_values.push(created_at.to_string().into());
            page_values.push(id.to_string().into());
        }
        let limit = query.limit.clamp(1, 500);
        self.with(
            |c| {
                let total: i64 = c.query_row(
                    &format!("SELECT COUNT(*) FROM interactions{filter}"),
                    rusqlite::params_from_iter(values.iter()),
                    |r| r.get(0),
                )?;
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM interactions{page_filter}
                     ORDER BY created_at DESC, id DESC LIMIT {}",
                    limit + 1
                ))?;
                let mut items: Vec<Interaction> = stmt
                    .query_map(
                        rusqlite::params_from_iter(page_values.iter()),
                        row_to_interaction,
                    )?
                    .collect::<rusqlite::Result<_>>()?;
                let next = if items.len() > limit {
                    items.truncate(limit);
                    items.last().map(|i| format!("{}|{}", i.created_at, i.id))
                } else {
                    None
                };
                Ok(Page {
                    items,
                    next,
                    total: total as u64,
                })
            },
            "search the history",
        )
    }

    /// The tools, projects and statuses that occur, for the filters.
    pub fn facets(&self) -> Result<Facets> {
        self.with(
            |c| {
                let column = |sql: &str| -> rusqlite::Result<Vec<String>> {
                    let mut stmt = c.prepare(sql)?;
                    let values = stmt.query_map([], |r| r.get(0))?.collect();
                    values
                };
                Ok(Facets {
                    tools: column("SELECT DISTINCT tool FROM interactions ORDER BY tool")?,
                    projects: column(
                        "SELECT DISTINCT project FROM interactions WHERE project IS NOT NULL ORDER BY project",
                    )?,
                    statuses: column("SELECT DISTINCT status FROM interactions ORDER BY status")?
                        .iter()
                        .map(|s| Status::parse(s))
                        .collect(),
                })
            },
            "read the history's filters",
        )
    }
}

/// `LIKE` pattern for a text search, with the user's `%`, `_` and `\` taken literally.
fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
