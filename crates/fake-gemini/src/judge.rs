//! A scripted judge, so tests of QA plans can check a page judgement end to end: a request
//! whose schema asks for `passed` (a boolean) and its `reasoning` is judged by a rule a test can predict, read from
//! the content as a model reads it, not from the client's wording (`received`): it passes when
//! every phrase quoted in what the client wrote (the criteria; not the values an instruction
//! acts on, such as `type "ada" into "Email"`) is also shown unquoted (the page's text),
//! wherever the client put each. The reasoning names the phrases found and
//! missing, and carries the proof of which media bytes arrived, like every other answer of the
//! fake; the answer fits the schema sent.

use serde_json::{json, Value};

use crate::received::Received;

/// What the rule decided: passed, and why.
pub(crate) struct Judged {
    passed: bool,
    why: String,
}

/// The rule's judgement, when the request is a page judgement.
pub(crate) fn judgement(schema: &Value, read: &Received) -> Option<Judged> {
    let typed = |name: &str, kind: &str| {
        schema["properties"][name]["type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case(kind))
    };
    if !(typed("passed", "boolean") && typed("reasoning", "string")) {
        return None;
    }
    // What a line asks to act on (`type "ada" into "Email"`) is no criterion.
    let (found, missing): (Vec<String>, Vec<String>) = read
        .phrases_but(crate::browse::acted_on)
        .into_iter()
        .partition(|phrase| read.shows(phrase));
    let why = format!(
        "Quoted in the criteria and on the page: {:?}; not on the page: {:?}.",
        found, missing
    );
    Some(Judged {
        passed: missing.is_empty(),
        why,
    })
}

/// The judgement in the schema's shape, other fields filled as the generic example fills them.
pub(crate) fn with_proof(judged: Judged, schema: &Value, proof: &str) -> Value {
    let answer = json!({
        "passed": judged.passed,
        "reasoning": format!("{} {proof}", judged.why),
        "confidence": 0.9,
    });
    crate::schema::fit(schema, &answer, proof)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "description": {"type": "string"}, "passed": {"type": "boolean"},
            "reasoning": {"type": "string"}, "confidence": {"type": "number"}}})
    }

    fn received(text: &str) -> Received {
        Received {
            texts: vec![text.to_string()],
            ..Received::default()
        }
    }

    #[test]
    fn quoted_phrases_decide() {
        let prompt = "Check it.\nCriteria: the greeting says \"Welcome, Ada\" and \"3 items\"\n<<<\nWelcome, Ada\n3 items\n>>>";
        assert!(judgement(&schema(), &received(prompt)).unwrap().passed);
        let wrong = prompt.replace("Welcome, Ada\n3", "Welcome, guest\n3");
        let judged = judgement(&schema(), &received(&wrong)).unwrap();
        assert!(!judged.passed);
        assert!(
            judged.why.contains("not on the page: [\"Welcome, Ada\"]"),
            "{}",
            judged.why
        );
        // The values of an instruction's actions are not criteria.
        let acting = format!("Log in: type \"ada\" into \"Email\".\n{prompt}");
        assert!(judgement(&schema(), &received(&acting)).unwrap().passed);
        let answer = with_proof(judged, &schema(), "media 1: image/png");
        assert_eq!(answer["passed"], false);
        assert!(answer["reasoning"]
            .as_str()
            .unwrap()
            .ends_with("media 1: image/png"));
    }

    #[test]
    fn other_requests_are_not_judged() {
        let other = json!({"type": "object", "properties": {"description": {"type": "string"}}});
        assert!(judgement(&other, &received("Criteria: \"x\"\n<<<x>>>")).is_none());
    }
}
