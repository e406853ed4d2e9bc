//! A scripted judge, so tests of QA plans can check a page judgement end to end: a request
//! whose schema asks for `passed` (a boolean) and whose prompt gives `Criteria:` and the page's
//! visible text between `<<<` and `>>>` (as Vaider's agentic assertions send them) is judged by
//! a rule a test can predict: it passes when every phrase quoted in the criteria is in the
//! page's text. The reasoning names the phrases found and missing, and carries the proof of
//! which media bytes arrived, like every other answer of the fake.

use serde_json::{json, Value};

/// What the rule decided: passed, and why.
pub(crate) struct Judged {
    passed: bool,
    why: String,
}

/// The rule's judgement, when the request is a page judgement.
pub(crate) fn judgement(schema: &Value, prompt: &str) -> Option<Judged> {
    let asks_passed = schema["properties"]["passed"]["type"]
        .as_str()
        .is_some_and(|t| t.eq_ignore_ascii_case("boolean"));
    if !asks_passed {
        return None;
    }
    let criteria = prompt
        .lines()
        .find_map(|line| line.strip_prefix("Criteria: "))?;
    let page = prompt.split_once("<<<")?.1.split_once(">>>")?.0;
    let phrases: Vec<&str> = criteria.split('"').skip(1).step_by(2).collect();
    let (found, missing): (Vec<&str>, Vec<&str>) =
        phrases.iter().partition(|phrase| page.contains(*phrase));
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
    let mut answer = crate::schema::example(schema, proof);
    if let Some(object) = answer.as_object_mut() {
        object.insert("passed".into(), json!(judged.passed));
        object.insert("reasoning".into(), json!(format!("{} {proof}", judged.why)));
        object.insert("confidence".into(), json!(0.9));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "description": {"type": "string"}, "passed": {"type": "boolean"},
            "reasoning": {"type": "string"}, "confidence": {"type": "number"}}})
    }

    #[test]
    fn quoted_phrases_decide() {
        let prompt = "Check it.\nCriteria: the greeting says \"Welcome, Ada\" and \"3 items\"\n<<<\nWelcome, Ada\n3 items\n>>>";
        assert!(judgement(&schema(), prompt).unwrap().passed);
        let wrong = prompt.replace("Welcome, Ada\n3", "Welcome, guest\n3");
        let judged = judgement(&schema(), &wrong).unwrap();
        assert!(!judged.passed);
        assert!(
            judged.why.contains("not on the page: [\"Welcome, Ada\"]"),
            "{}",
            judged.why
        );
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
        assert!(judgement(&other, "Criteria: \"x\"\n<<<x>>>").is_none());
        assert!(judgement(&schema(), "no criteria here").is_none());
    }
}
