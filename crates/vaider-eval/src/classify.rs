//! Turns a tool's words into defect classes and moments. A recording's answer names its
//! classes on a `DEFECTS:` line (the eval prompt asks for one); the visual compare has its own
//! fixed prompt, so its unexpected changes are read by keywords. Both rules are plain and
//! documented in docs/eval.md, so a score can be traced back to the answer's words.

use crate::labels::CLASSES;

/// The classes on the answer's `DEFECTS:` line: `None` when there is no such line, an empty
/// list for `DEFECTS: none`.
pub fn defects_line(text: &str) -> Option<Vec<String>> {
    let line = text.lines().rev().find_map(|line| {
        let line = line.trim().trim_start_matches(['*', '-', ' ']);
        let upper = line.get(..8)?;
        upper
            .eq_ignore_ascii_case("DEFECTS:")
            .then(|| line[8..].to_string())
    })?;
    let lower = line.to_ascii_lowercase();
    Some(
        CLASSES
            .iter()
            .filter(|class| lower.contains(*class))
            .map(|class| class.to_string())
            .collect(),
    )
}

/// Keywords of each class, tried in this order on a change's description.
const KEYWORDS: &[(&str, &[&str])] = &[
    (
        "text-overflow",
        &[
            "overflow",
            "truncat",
            "cut off",
            "clipped",
            "spills",
            "does not fit",
        ],
    ),
    (
        "overlap",
        &["overlap", "covers", "covering", "on top of", "obscur"],
    ),
    (
        "flash-error-toast",
        &["error toast", "error message", "toast"],
    ),
    (
        "endless-spinner",
        &["spinner", "loading indicator", "keeps loading"],
    ),
    (
        "wrong-page",
        &["wrong page", "different page", "page title", "navigat"],
    ),
    (
        "layout-shift",
        &["shift", "moved down", "pushed down", "moved up", "banner"],
    ),
    (
        "wrong-colour-state",
        &["colour", "color", "red", "disabled", "badge"],
    ),
    (
        "missing-extra-element",
        &[
            "missing",
            "removed",
            "no longer",
            "disappear",
            "extra",
            "added button",
            "new button",
        ],
    ),
    ("unmentioned-change", &["header", "title", "renamed"]),
    (
        "wrong-text",
        &["text", "label", "typo", "spelling", "wording", "message"],
    ),
];

/// The first class whose keywords a change's description holds.
pub fn by_keywords(description: &str) -> Option<&'static str> {
    let lower = description.to_ascii_lowercase();
    KEYWORDS
        .iter()
        .find(|(_, words)| words.iter().any(|w| lower.contains(w)))
        .map(|(class, _)| *class)
}

/// Every moment written as `mm:ss`, `m:ss` or `h:mm:ss` (optionally `.f`), in seconds.
pub fn timestamps(text: &str) -> Vec<f64> {
    let mut found = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.')) {
        let word = word.trim_matches('.');
        if !word.contains(':') {
            continue;
        }
        let parts: Vec<&str> = word.split(':').collect();
        if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
            continue;
        }
        let mut secs = 0.0;
        let mut ok = true;
        for part in &parts {
            match part.parse::<f64>() {
                Ok(v) => secs = secs * 60.0 + v,
                Err(_) => ok = false,
            }
        }
        if ok {
            found.push(secs);
        }
    }
    found
}

/// The region numbers a compare answer's region text names ("Region 2", "regions 1 and 3").
pub fn region_numbers(text: &str) -> Vec<u32> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defects_line_names_classes_or_none() {
        let answer =
            "00:00 The cart.\n00:02 A panel appears.\nDEFECTS: overlap [00:02], wrong-text [00:03]";
        assert_eq!(
            defects_line(answer).unwrap(),
            vec!["overlap".to_string(), "wrong-text".to_string()]
        );
        assert_eq!(
            defects_line("**DEFECTS:** none").unwrap(),
            Vec::<String>::new()
        );
        assert!(defects_line("no such line").is_none());
    }

    #[test]
    fn keywords_give_a_class() {
        assert_eq!(by_keywords("The label is truncated"), Some("text-overflow"));
        assert_eq!(
            by_keywords("A yellow panel covers the button"),
            Some("overlap")
        );
        assert_eq!(
            by_keywords("The header now reads Corner Store"),
            Some("unmentioned-change")
        );
        assert_eq!(by_keywords("Something"), None);
    }

    #[test]
    fn timestamps_and_region_numbers_are_read() {
        assert_eq!(
            timestamps("at 00:02 and 1:05.5, then 12:00."),
            vec![2.0, 65.5, 720.0]
        );
        assert!(timestamps("ratio 3 to 4").is_empty());
        assert_eq!(region_numbers("Regions 1 and 3"), vec![1, 3]);
    }
}
