//! What a model reads of a request, for the scripted answers (`browse`, `judge`, `planner`):
//! the system instruction, the user's text parts and the earlier turns of the conversation,
//! read by the shape of their content (a page's element lines, quoted phrases, the words on
//! the page) and never by the wording or the markers of the client's prompts. A client may
//! reword its prompts, fence its blocks differently or reorder them: the answers stay the same.

/// The text of a request, as a model reads it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Received {
    /// The system instruction's text parts.
    pub(crate) system: Vec<String>,
    /// The user's text parts, in order.
    pub(crate) texts: Vec<String>,
    /// The text of each earlier `model` turn: the model's own answers, in a conversation.
    pub(crate) answers: Vec<String>,
}

/// One element of a page, as an accessibility snapshot lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Element {
    pub(crate) reference: String,
    pub(crate) role: String,
    pub(crate) name: String,
}

impl Received {
    /// Every line of the user's text, trimmed, the empty ones left out.
    pub(crate) fn lines(&self) -> impl Iterator<Item = &str> {
        self.texts
            .iter()
            .flat_map(|t| t.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
    }

    /// The page's elements, wherever they are in the text: lines shaped `[3] button "Sign in"`
    /// (Vaider's snapshot) or `- button "Sign in" [ref=e12]` (Playwright's ARIA snapshot).
    pub(crate) fn elements(&self) -> Vec<Element> {
        self.lines().filter_map(element).collect()
    }

    /// The lines that are not a page's elements: what the client wrote and what was done.
    pub(crate) fn prose(&self) -> Vec<&str> {
        self.lines().filter(|l| element(l).is_none()).collect()
    }

    /// The phrases quoted in the prose, in order, each once (`the page shows "Welcome"`), but
    /// those `left_out` of their line (what a line asks to act on, say, or what it says of the
    /// model's own answer). A quoted value of code (`id="email"`, `x = "a_b"`) is no phrase.
    pub(crate) fn phrases_but(&self, left_out: impl Fn(&str) -> Vec<String>) -> Vec<String> {
        let mut phrases: Vec<String> = Vec::new();
        for line in self.prose() {
            let skip = left_out(line);
            for phrase in quoted(line) {
                if !skip.iter().any(|s| s == phrase) && !phrases.iter().any(|p| p == phrase) {
                    phrases.push(phrase.to_string());
                }
            }
        }
        phrases
    }

    /// Whether the text shows `phrase` other than quoted as asked for: the page's text (or
    /// anything else the client sent) has it.
    pub(crate) fn shows(&self, phrase: &str) -> bool {
        let quoted = format!("\"{phrase}\"");
        self.texts
            .iter()
            .any(|t| t.replace(&quoted, "").contains(phrase))
    }

    /// Whether any text the model reads contains `word`, case-insensitively.
    pub(crate) fn says(&self, word: &str) -> bool {
        let word = word.to_lowercase();
        self.texts.iter().any(|t| t.to_lowercase().contains(&word))
    }
}

/// The phrases between double quotes in a line of prose: each opens after a space, a bracket
/// or the line's start (not after `=`, as code's values do) and holds a letter.
pub(crate) fn quoted(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(open) = line[at..].find('"').map(|i| at + i) {
        let Some(close) = line[open + 1..].find('"').map(|i| open + 1 + i) else {
            break;
        };
        let phrase = &line[open + 1..close];
        let after_equals = line[..open].trim_end().ends_with('=');
        let identifier = phrase.contains('_') && !phrase.contains(' ');
        if !after_equals && !identifier && phrase.chars().any(char::is_alphanumeric) {
            found.push(phrase);
        }
        at = close + 1;
    }
    found
}

/// `[3] button "Sign in" …` or `- button "Sign in" [ref=e12]` as an element.
pub(crate) fn element(line: &str) -> Option<Element> {
    let line = line.trim().trim_start_matches(['-', '*']).trim_start();
    if let Some(rest) = line.strip_prefix('[') {
        let (reference, rest) = rest.split_once("] ")?;
        if reference.is_empty() || reference.contains(char::is_whitespace) {
            return None;
        }
        let (role, rest) = rest.split_once(' ')?;
        let name = rest.strip_prefix('"')?.split_once('"')?.0;
        return Some(Element {
            reference: reference.trim_start_matches("ref=").to_string(),
            role: role.to_string(),
            name: name.to_string(),
        });
    }
    let (role, rest) = line.split_once(' ')?;
    let name = rest.strip_prefix('"')?.split_once('"')?.0;
    let reference = rest.split_once("[ref=")?.1.split_once(']')?.0;
    (!role.contains(':') && !reference.is_empty()).then(|| Element {
        reference: reference.to_string(),
        role: role.to_string(),
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(text: &str) -> Received {
        Received {
            texts: vec![text.to_string()],
            ..Received::default()
        }
    }

    #[test]
    fn elements_are_found_by_their_shape_in_either_snapshot_format() {
        let vaider =
            received("Elements:\n[2] textbox \"Email\" value=\"\"\n  [3] button \"Sign in\"");
        assert_eq!(
            vaider.elements(),
            [
                Element {
                    reference: "2".into(),
                    role: "textbox".into(),
                    name: "Email".into()
                },
                Element {
                    reference: "3".into(),
                    role: "button".into(),
                    name: "Sign in".into()
                }
            ]
        );
        let aria =
            received("- button \"Sign in\" [ref=e12]\n- heading \"Shop\" [level=1] [ref=e3]");
        let refs: Vec<String> = aria.elements().into_iter().map(|e| e.reference).collect();
        assert_eq!(refs, ["e12", "e3"]);
        // An action done earlier names an element inside its line: it is not one of the page's.
        assert!(received("1. click [3] button \"Sign in\" — ok")
            .elements()
            .is_empty());
    }

    #[test]
    fn phrases_are_quoted_prose_not_code_values() {
        let text = received(
            "It shows \"Sign in\" and (\"Welcome, Ada\").\n<input id=\"email\">\nconst BUG = \"__BUG__\";\nIt shows \"Sign in\"",
        );
        assert_eq!(
            text.phrases_but(|_| Vec::new()),
            ["Sign in", "Welcome, Ada"]
        );
        let page = received("the page shows \"Welcome\"\nWelcome back");
        assert!(page.shows("Welcome"));
        assert!(!page.shows("Welcome, Ada"));
        assert!(!received("the page shows \"Welcome\"").shows("Welcome"));
    }
}
