//! A scripted browser user, so tests of QA plans can check an `agentic_browsing` step end to
//! end: a request whose schema asks for a browsing `action` (its enum has `give_up`) gets the
//! next action by a rule a test can predict, read from the content as a model reads it, not
//! from the client's wording (`received`):
//! - the instruction is the line with the most quoted hints, done in order, one per turn:
//!   `click "Sign in"`, `type "ada@example.com" into "Email"`, `press "Enter"`,
//!   `scroll "down"`, `navigate "/login"`, and `click ref "99"` (a ref as it is, even one the
//!   page does not have); after the last hint the answer is `done`;
//! - the actions done so far are the earlier turns of the conversation, or the other lines
//!   that record one (an action's word with its target: an element, a quoted value, a way to
//!   scroll or an address);
//! - an element is found among the page's element lines (`[3] button "Sign in"`, or
//!   `- button "Sign in" [ref=e12]`), wherever they are, by its quoted name;
//! - `never finish` in what the client wrote: scroll down, every turn;
//! - `give up` in it: give up.
//!
//! The reasoning carries the proof of which media bytes arrived, like every answer of the fake,
//! and the answer fits the schema sent.

use serde_json::{json, Value};

use crate::received::{Element, Received};

/// The next action, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decided {
    action: &'static str,
    reference: String,
    text: String,
    why: String,
}

/// One quoted hint of the instruction.
#[derive(Debug, Clone, PartialEq)]
enum Hint {
    Click(String),
    ClickRef(String),
    Type { text: String, into: String },
    Press(String),
    Scroll(String),
    Navigate(String),
}

/// The rule's next action, when the request asks for one.
pub(crate) fn decision(schema: &Value, read: &Received) -> Option<Decided> {
    let asks_action = schema["properties"]["action"]["enum"]
        .as_array()
        .is_some_and(|actions| actions.iter().any(|a| a == "give_up"));
    if !asks_action {
        return None;
    }
    let prose = read.prose();
    let said = |words: &str| prose.iter().any(|l| l.to_lowercase().contains(words));
    if said("give up") {
        return Some(decided(
            "give_up",
            "",
            "",
            "The instruction tells me to give up.",
        ));
    }
    if said("never finish") {
        return Some(decided(
            "scroll",
            "",
            "down",
            "The instruction never finishes, so I keep scrolling.",
        ));
    }
    // The instruction: the line with the most hints, the first of equals.
    let mut instruction: Option<(usize, Vec<Hint>)> = None;
    for (at, line) in prose.iter().enumerate() {
        let found = hints(line);
        if found.len() > instruction.as_ref().map_or(0, |(_, h)| h.len()) {
            instruction = Some((at, found));
        }
    }
    let (at, hints) = instruction.unwrap_or((usize::MAX, Vec::new()));
    let recorded = prose
        .iter()
        .enumerate()
        .filter(|(i, line)| *i != at && records_an_action(line))
        .count();
    let done = recorded.max(read.answers.len());
    Some(match hints.get(done) {
        None => decided(
            "done",
            "",
            "",
            &format!("All {} scripted actions are done.", hints.len()),
        ),
        Some(hint) => act(hint, &read.elements()),
    })
}

/// The decision in the schema's shape, other fields filled as the generic example fills them.
pub(crate) fn with_proof(decided: Decided, schema: &Value, proof: &str) -> Value {
    let answer = json!({
        "action": decided.action,
        "ref": decided.reference,
        "text": decided.text,
        "reasoning": format!("{} {proof}", decided.why),
    });
    crate::schema::fit(schema, &answer, proof)
}

/// Whether a line records an action done: an action's word, and its target (an element, a
/// quoted value, a way to scroll or an address).
fn records_an_action(line: &str) -> bool {
    let lower = line.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let acted = words
        .iter()
        .any(|w| ["click", "type", "press", "scroll", "navigate"].contains(w));
    let target = line.contains('[')
        || line.contains('"')
        || line.contains('/')
        || words.iter().any(|w| *w == "up" || *w == "down");
    acted && target
}

fn decided(action: &'static str, reference: &str, text: &str, why: &str) -> Decided {
    Decided {
        action,
        reference: reference.to_string(),
        text: text.to_string(),
        why: why.to_string(),
    }
}

/// The hint as an action on the page's elements; a name the page does not list is given up on,
/// as a user would.
fn act(hint: &Hint, elements: &[Element]) -> Decided {
    let missing = |name: &str| {
        decided(
            "give_up",
            "",
            "",
            &format!("No element named \"{name}\" is in the page's elements."),
        )
    };
    match hint {
        Hint::Click(name) => match find(elements, name, &["button", "link"]) {
            Some(r) => decided("click", &r, "", &format!("I click \"{name}\".")),
            None => missing(name),
        },
        Hint::ClickRef(r) => decided("click", r, "", &format!("I click ref {r}.")),
        Hint::Type { text, into } => {
            match find(elements, into, &["textbox", "searchbox", "combobox"]) {
                Some(r) => decided("type", &r, text, &format!("I type into \"{into}\".")),
                None => missing(into),
            }
        }
        Hint::Press(key) => decided("press", "", key, &format!("I press {key}.")),
        Hint::Scroll(way) => decided("scroll", "", way, &format!("I scroll {way}.")),
        Hint::Navigate(url) => decided("navigate", "", url, &format!("I go to {url}.")),
    }
}

/// The ref of the first element named `name`, one of the `preferred` roles first.
fn find(elements: &[Element], name: &str, preferred: &[&str]) -> Option<String> {
    let named: Vec<&Element> = elements.iter().filter(|e| e.name == name).collect();
    named
        .iter()
        .find(|e| preferred.contains(&e.role.as_str()))
        .or(named.first())
        .map(|e| e.reference.clone())
}

/// The quoted values a line asks to act on: the names, texts, keys and addresses of its hints.
pub(crate) fn acted_on(line: &str) -> Vec<String> {
    hints(line)
        .into_iter()
        .flat_map(|hint| match hint {
            Hint::Type { text, into } => vec![text, into],
            Hint::Click(v)
            | Hint::ClickRef(v)
            | Hint::Press(v)
            | Hint::Scroll(v)
            | Hint::Navigate(v) => vec![v],
        })
        .collect()
}

/// The quoted hints of the instruction, in order.
fn hints(instruction: &str) -> Vec<Hint> {
    // Between quotes on odd indices; a last quote left open is not a hint.
    let parts: Vec<&str> = instruction.split('"').collect();
    let quoted = |i: usize| (i % 2 == 1 && i + 1 < parts.len()).then(|| parts[i].to_string());
    let mut hints = Vec::new();
    let mut i = 1;
    while let Some(value) = quoted(i) {
        let before = parts[i - 1].trim_end().to_lowercase();
        let says = |word: &str| before == word || before.ends_with(&format!(" {word}"));
        let hint = if says("click ref") {
            Some(Hint::ClickRef(value))
        } else if says("click") {
            Some(Hint::Click(value))
        } else if says("press") {
            Some(Hint::Press(value))
        } else if says("scroll") {
            Some(Hint::Scroll(value))
        } else if says("navigate") {
            Some(Hint::Navigate(value))
        } else if says("type") && parts[i + 1].trim() == "into" {
            if let Some(into) = quoted(i + 2) {
                i += 2;
                Some(Hint::Type { text: value, into })
            } else {
                None
            }
        } else {
            None
        };
        hints.extend(hint);
        i += 2;
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "description": {"type": "string"},
            "action": {"type": "string", "enum": ["click", "type", "press", "scroll", "navigate", "done", "give_up"]},
            "ref": {"type": "string"}, "text": {"type": "string"}, "reasoning": {"type": "string"}}})
    }

    const ELEMENTS: &str =
        "<<<\n[1] label \"Email\"\n[2] textbox \"Email\" value=\"\"\n[3] button \"Sign in\"\n>>>";

    fn prompt(instruction: &str, done: usize) -> String {
        let actions: String = (1..=done)
            .map(|n| format!("Action {n}: click [9] button \"Elsewhere\" — ok\n"))
            .collect();
        format!("Instruction: {instruction}\nActions so far:\n{actions}The page's elements:\n{ELEMENTS}\nAnswer.")
    }

    fn received(text: &str) -> Received {
        Received {
            texts: vec![text.to_string()],
            ..Received::default()
        }
    }

    fn next(instruction: &str, done: usize) -> Decided {
        decision(&schema(), &received(&prompt(instruction, done))).unwrap()
    }

    #[test]
    fn the_hints_are_done_in_order_then_done() {
        let log_in =
            "Log in: type \"ada@example.com\" into \"Email\", click \"Sign in\", press \"Enter\".";
        let first = next(log_in, 0);
        assert_eq!(
            (first.action, first.reference.as_str(), first.text.as_str()),
            ("type", "2", "ada@example.com"),
            "the textbox, not its label"
        );
        let second = next(log_in, 1);
        assert_eq!((second.action, second.reference.as_str()), ("click", "3"));
        assert_eq!(
            (next(log_in, 2).action, next(log_in, 2).text.as_str()),
            ("press", "Enter")
        );
        let last = next(log_in, 3);
        assert_eq!(last.action, "done");
        assert!(last.why.contains("All 3"), "{}", last.why);
    }

    #[test]
    fn scripted_words_give_up_scroll_forever_or_name_a_ref() {
        assert_eq!(next("Please give up now.", 0).action, "give_up");
        let endless = next("Look around and never finish.", 7);
        assert_eq!((endless.action, endless.text.as_str()), ("scroll", "down"));
        let bad = next("click ref \"99\" then click \"Sign in\"", 0);
        assert_eq!((bad.action, bad.reference.as_str()), ("click", "99"));
        assert_eq!(
            next("click ref \"99\" then click \"Sign in\"", 1).reference,
            "3"
        );
        let missing = next("click \"Register\"", 0);
        assert_eq!(missing.action, "give_up");
        assert!(missing.why.contains("\"Register\""));
        assert_eq!(next("Nothing to do here.", 0).action, "done");
    }

    #[test]
    fn the_answer_has_the_schema_s_shape_and_the_proof() {
        let answer = with_proof(
            next("click \"Sign in\"", 0),
            &schema(),
            "media 1: sha256 ab",
        );
        assert_eq!(answer["action"], "click");
        assert_eq!(answer["ref"], "3");
        assert_eq!(answer["text"], "");
        assert!(answer["reasoning"]
            .as_str()
            .unwrap()
            .ends_with("media 1: sha256 ab"));
        assert!(answer["description"].is_string());
    }

    #[test]
    fn other_requests_get_no_action() {
        let judge = json!({"type": "object", "properties": {"passed": {"type": "boolean"}}});
        assert!(decision(&judge, &received(&prompt("click \"Sign in\"", 0))).is_none());
        // Nothing to do on a page with no elements: done.
        let nothing = decision(&schema(), &received("Instruction: x\nno elements")).unwrap();
        assert_eq!(nothing.action, "done");
    }

    #[test]
    fn an_open_quote_or_a_type_without_a_target_is_not_a_hint() {
        assert!(hints("click \"Sign in").is_empty());
        assert!(hints("type \"x\" somewhere").is_empty());
        assert_eq!(
            hints("prototype \"x\" into \"y\" then click \"z\""),
            [Hint::Click("z".into())]
        );
    }
}
