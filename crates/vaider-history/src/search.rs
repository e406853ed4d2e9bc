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
        let filter = query.filter();
        let mut page_filter = filter.clone();
        if let Some((created_at, id)) = query.before.as_deref().and_then(|b| b.split_once('|')) {
            page_filter.and_before(created_at, id);
        }
        let limit = query.limit.clamp(1, 500);
        self.with(
            |c| {
                let total: i64 = c.query_row(
                    &format!("SELECT COUNT(*) FROM interactions{}", filter.sql),
                    rusqlite::params_from_iter(filter.values.iter()),
                    |r| r.get(0),
                )?;
                let (items, next) = page(c, &page_filter, limit)?;
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

/// The rows of one page, newest first, and the cursor of the next page (none on the last).
fn page(
    c: &rusqlite::Connection,
    filter: &Filter,
    limit: usize,
) -> rusqlite::Result<(Vec<Interaction>, Option<String>)> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM interactions{}
                     ORDER BY created_at DESC, id DESC LIMIT {}",
        filter.sql,
        limit + 1
    ))?;
    let mut items: Vec<Interaction> = stmt
        .query_map(
            rusqlite::params_from_iter(filter.values.iter()),
            row_to_interaction,
        )?
        .collect::<rusqlite::Result<_>>()?;
    let next = if items.len() > limit {
        items.truncate(limit);
        items.last().map(|i| format!("{}|{}", i.created_at, i.id))
    } else {
        None
    };
    Ok((items, next))
}

/// A `WHERE` clause and its values. Parameters are numbered, so one search text can be used
/// in several places.
#[derive(Debug, Clone, Default)]
struct Filter {
    sql: String,
    values: Vec<rusqlite::types::Value>,
}

impl Filter {
    /// Adds a condition whose `?N` all stand for `value`.
    fn and(&mut self, condition: &str, value: rusqlite::types::Value) {
        self.sql.push_str(self.joiner());
        let n = self.values.len() + 1;
        self.sql
            .push_str(&condition.replace("?N", &format!("?{n}")));
        self.values.push(value);
    }

    /// Only the rows before a page's cursor (its last row's time and id).
    fn and_before(&mut self, created_at: &str, id: &str) {
        self.sql.push_str(self.joiner());
        let n = self.values.len();
        self.sql
            .push_str(&format!("(created_at, id) < (?{}, ?{})", n + 1, n + 2));
        self.values.push(created_at.to_string().into());
        self.values.push(id.to_string().into());
    }

    fn joiner(&self) -> &'static str {
        if self.sql.is_empty() {
            " WHERE "
        } else {
            " AND "
        }
    }
}

impl Query {
    /// The query's text search and filters, without its cursor.
    fn filter(&self) -> Filter {
        let mut filter = Filter::default();
        if let Some(text) = self
            .text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            filter.and(
                "(source LIKE ?N ESCAPE '\\' OR prompt LIKE ?N ESCAPE '\\'
                  OR description LIKE ?N ESCAPE '\\' OR model LIKE ?N ESCAPE '\\'
                  OR error_message LIKE ?N ESCAPE '\\' OR tool LIKE ?N ESCAPE '\\')",
                like_pattern(text).into(),
            );
        }
        if let Some(status) = self.status {
            filter.and("status = ?N", status.as_str().to_string().into());
        }
        if let Some(tool) = self.tool.as_deref().filter(|t| !t.is_empty()) {
            filter.and("tool = ?N", tool.to_string().into());
        }
        if let Some(project) = self.project.as_deref().filter(|p| !p.is_empty()) {
            filter.and("project = ?N", project.to_string().into());
        }
        filter
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
