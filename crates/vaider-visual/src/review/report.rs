//! What a CI run writes about a check: JUnit XML (one test case per capture, a failure for
//! each new or changed one), a Markdown summary with thumbnails (also appended to
//! `$GITHUB_STEP_SUMMARY`), and GitHub's `::error` annotations.

use std::path::Path;

use serde::Serialize;

use super::changes::{BaselineStatus, PendingChange};

/// One capture's outcome in a check.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckEntry {
    pub name: String,
    pub variant: String,
    /// None when the capture itself failed (`error` says why).
    pub status: Option<BaselineStatus>,
    pub baseline: String,
    pub change: Option<PendingChange>,
    pub error: Option<String>,
    /// Approved in this run (`vaider check --update`).
    #[serde(default)]
    pub approved: bool,
}

impl CheckEntry {
    /// Unapproved: new, changed, or not captured at all.
    pub fn fails(&self) -> bool {
        self.status != Some(BaselineStatus::Unchanged) && !self.approved
    }

    fn label(&self) -> String {
        format!("{}@{}", self.name, self.variant)
    }

    fn problem(&self) -> String {
        match (&self.status, &self.error, &self.change) {
            (_, Some(error), _) => format!("could not be checked: {error}"),
            (Some(BaselineStatus::New), ..) => {
                "new: no baseline yet; approve it with `vaider review` or `vaider check --update`"
                    .into()
            }
            (Some(BaselineStatus::Changed), _, Some(change)) => format!(
                "changed: {} regions, {} pixels differ from {}{}; review with `vaider review`",
                change.regions.len(),
                change.changed_pixels,
                self.baseline,
                verdict_words(change)
            ),
            _ => "unchanged".into(),
        }
    }
}

fn verdict_words(change: &PendingChange) -> String {
    if change.verdicts.is_empty() {
        return String::new();
    }
    let words: Vec<String> = change
        .verdicts
        .iter()
        .map(|v| format!("region {} {}: {}", v.region, v.verdict, v.reason))
        .collect();
    format!(" ({})", words.join("; "))
}

/// JUnit XML: one suite, a test case per capture.
pub fn junit_xml(entries: &[CheckEntry]) -> String {
    let failures = entries.iter().filter(|e| e.fails()).count();
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"vaider check\" tests=\"{}\" failures=\"{failures}\">\n  <testsuite name=\"vaider check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n",
        entries.len(),
        entries.len()
    );
    for entry in entries {
        xml.push_str(&format!(
            "    <testcase classname=\"vaider.baselines\" name=\"{}\">",
            escape(&entry.label())
        ));
        if entry.fails() {
            let kind = entry.status.map(BaselineStatus::as_str).unwrap_or("error");
            xml.push_str(&format!(
                "\n      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n    ",
                escape(&entry.problem()),
                escape(&entry.problem())
            ));
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

fn escape(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The Markdown summary: a line of counts, then a table row per capture that needs review,
/// with thumbnails of the new picture and of the diff (paths relative to `relative_to`).
pub fn markdown_summary(entries: &[CheckEntry], relative_to: &Path) -> String {
    let failing: Vec<&CheckEntry> = entries.iter().filter(|e| e.fails()).collect();
    let mut text = format!(
        "## Vaider check\n\n{} captures: {} unchanged, {} to review.\n",
        entries.len(),
        entries.len() - failing.len(),
        failing.len()
    );
    if failing.is_empty() {
        return text;
    }
    text.push_str("\n| capture | status | actual | diff |\n|---|---|---|---|\n");
    let picture = |path: Option<&Path>| match path {
        Some(p) => format!(
            "<img src=\"{}\" width=\"160\">",
            p.strip_prefix(relative_to).unwrap_or(p).display()
        ),
        None => String::new(),
    };
    for entry in failing {
        let change = entry.change.as_ref();
        text.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            entry.label(),
            entry.problem().replace('|', "\\|"),
            picture(change.map(|c| c.actual.as_path())),
            picture(change.and_then(|c| c.annotated.as_deref())),
        ));
    }
    text
}

/// GitHub's annotations, one `::error` line per capture to review.
pub fn github_annotations(entries: &[CheckEntry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.fails())
        .map(|e| {
            let message = format!("{}: {}", e.label(), e.problem())
                .replace('%', "%25")
                .replace('\r', "%0D")
                .replace('\n', "%0A");
            format!("::error file={},title=Visual change::{message}", e.baseline)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, status: BaselineStatus) -> CheckEntry {
        CheckEntry {
            name: name.into(),
            variant: "400x300".into(),
            status: Some(status),
            baseline: format!(".vaider/baselines/{name}@400x300.png"),
            change: None,
            error: None,
            approved: false,
        }
    }

    #[test]
    fn only_unapproved_captures_fail_and_the_text_is_escaped() {
        let entries = [
            entry("home", BaselineStatus::Unchanged),
            entry("a<b>&\"", BaselineStatus::New),
        ];
        let xml = junit_xml(&entries);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(xml.contains("a&lt;b&gt;&amp;&quot;@400x300"), "{xml}");
        let summary = markdown_summary(&entries, Path::new("/"));
        assert!(summary.contains("1 unchanged, 1 to review"), "{summary}");
        let notes = github_annotations(&entries);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("::error file=.vaider/baselines/a<b>&\"@400x300.png"));
    }
}
