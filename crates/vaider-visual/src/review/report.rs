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

    /// What `--update` approves: a pending change of this run, failing (new, changed) or not
    /// (noise learned on an unchanged picture, offered to be ignored from now on).
    pub fn awaits_decision(&self) -> bool {
        !self.approved
            && self
                .change
                .as_ref()
                .is_some_and(|c| c.state == super::changes::ChangeState::Pending)
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

/// Where the summary's thumbnails are found by whoever reads it.
#[derive(Debug, Clone, Copy)]
pub enum Pictures<'a> {
    /// A summary file read beside the project's files: paths relative to the file's folder.
    Beside { summary_dir: &'a Path },
    /// The pending changes' folder (`.vaider/local/review/`) published at this address
    /// (`--image-url`): each picture's path in that folder is appended to it.
    Published { changes: &'a Path, base: &'a str },
    /// Read where no local file can show (GitHub's step summary: its pages show images from
    /// https addresses only): each picture is named by its path, with where to find it.
    Named {
        project: &'a Path,
        changes: &'a Path,
        run: Option<&'a str>,
    },
}

impl Pictures<'_> {
    /// A thumbnail of `path` (a file in the project), or its name where none can show.
    fn thumbnail(&self, path: &Path) -> String {
        match *self {
            Pictures::Beside { summary_dir } => img(&relative(summary_dir, path)),
            Pictures::Published { changes, base } => {
                let inside = path.strip_prefix(changes).unwrap_or(path);
                let parts: Vec<String> = inside
                    .components()
                    .map(|c| vaider_core::source::percent_encode(&c.as_os_str().to_string_lossy()))
                    .collect();
                img(&format!(
                    "{}/{}",
                    base.trim_end_matches('/'),
                    parts.join("/")
                ))
            }
            Pictures::Named { project, .. } => {
                format!("`{}`", path.strip_prefix(project).unwrap_or(path).display())
            }
        }
    }

    /// The sentence under the table that says where the pictures are, when they are not shown.
    fn note(&self) -> Option<String> {
        let Pictures::Named {
            project,
            changes,
            run,
        } = *self
        else {
            return None;
        };
        let folder = changes.strip_prefix(project).unwrap_or(changes).display();
        let this_run = run
            .map(|run| format!(" of [this run]({run})"))
            .unwrap_or_default();
        Some(format!(
            "\nThe pictures are in `{folder}/`: upload it as an artifact{this_run} to keep them (actions/upload-artifact needs `include-hidden-files: true` for it), or publish it and pass its address as `--image-url` to see them here.\n"
        ))
    }
}

fn img(src: &str) -> String {
    format!("<img src=\"{}\" width=\"160\">", escape(src))
}

/// `to` as a path from the folder `from` (both absolute, or both relative to one folder):
/// `../.vaider/local/review/x/actual.png` for a summary written one folder down.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let shared = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - shared];
    parts.extend(
        to_parts[shared..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// The Markdown summary: a line of counts, then a table row per capture that needs review,
/// with thumbnails of the new picture and of the diff where `pictures` can show them.
pub fn markdown_summary(entries: &[CheckEntry], pictures: Pictures<'_>) -> String {
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
    let picture = |path: Option<&Path>| path.map(|p| pictures.thumbnail(p)).unwrap_or_default();
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
    text.extend(pictures.note());
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
        let pictures = Pictures::Beside {
            summary_dir: Path::new("/p"),
        };
        let summary = markdown_summary(&entries, pictures);
        assert!(summary.contains("1 unchanged, 1 to review"), "{summary}");
        let notes = github_annotations(&entries);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("::error file=.vaider/baselines/a<b>&\"@400x300.png"));
    }

    #[test]
    fn thumbnails_point_where_the_reader_finds_the_pictures() {
        let project = Path::new("/p");
        let actual = Path::new("/p/.vaider/local/review/a b/actual.png");
        let beside = Pictures::Beside {
            summary_dir: Path::new("/p/reports"),
        };
        assert_eq!(
            beside.thumbnail(actual),
            "<img src=\"../.vaider/local/review/a b/actual.png\" width=\"160\">"
        );
        let published = Pictures::Published {
            changes: Path::new("/p/.vaider/local/review"),
            base: "https://example.test/run/7/",
        };
        assert_eq!(
            published.thumbnail(actual),
            "<img src=\"https://example.test/run/7/a%20b/actual.png\" width=\"160\">"
        );
        let named = Pictures::Named {
            project,
            changes: Path::new("/p/.vaider/local/review"),
            run: Some("https://github.com/o/r/actions/runs/9"),
        };
        assert_eq!(
            named.thumbnail(actual),
            "`.vaider/local/review/a b/actual.png`"
        );
        let note = named.note().unwrap();
        assert!(note.contains("`.vaider/local/review/`"), "{note}");
        assert!(
            note.contains("[this run](https://github.com/o/r/actions/runs/9)"),
            "{note}"
        );
        assert!(note.contains("--image-url"), "{note}");
        assert_eq!(beside.note(), None);
    }

    #[test]
    fn update_takes_every_pending_change_the_noise_offers_of_unchanged_pictures_too() {
        use crate::review::changes::ChangeState;
        let base = Path::new(".vaider/baselines/home@400x300.png");
        let offer = |status, state| PendingChange {
            status,
            state,
            ..crate::review::changes::tests::change("c1", "2026-11-29T00:00:00Z", base)
        };
        let mut noise = entry("home", BaselineStatus::Unchanged);
        noise.change = Some(offer(BaselineStatus::Unchanged, ChangeState::Pending));
        assert!(!noise.fails() && noise.awaits_decision());
        let mut changed = entry("home", BaselineStatus::Changed);
        changed.change = Some(offer(BaselineStatus::Changed, ChangeState::Pending));
        assert!(changed.fails() && changed.awaits_decision());
        changed.approved = true;
        assert!(!changed.awaits_decision());
        let mut decided = entry("home", BaselineStatus::Unchanged);
        decided.change = Some(offer(BaselineStatus::Unchanged, ChangeState::Rejected));
        assert!(!decided.awaits_decision());
        assert!(!entry("home", BaselineStatus::Unchanged).awaits_decision());
    }
}
