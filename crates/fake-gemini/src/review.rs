//! A scripted reviewer, so tests of the review loop can check verdicts end to end: a request
//! whose schema asks for `regions` with a `verdict` each is answered by a rule a test can
//! predict, read from the prompt as a model reads it: the regions listed as `- region N: …`,
//! and the changes listed under "declared". The first regions, one per declared change, are
//! `intentional` (their reason quotes that change); the others are `regression`. The answer
//! fits the schema sent and carries the proof of which media bytes arrived.

use serde_json::{json, Value};

use crate::received::Received;

/// The verdicts, when the request asks for a review's verdicts.
pub(crate) fn verdicts(schema: &Value, read: &Received, proof: &str) -> Option<Value> {
    let item = &schema["properties"]["regions"]["items"]["properties"];
    // Only a schema whose regions carry an enumerated verdict is a review.
    item["verdict"]["enum"].as_array()?;
    let mut regions = Vec::new();
    let mut declared = Vec::new();
    let mut in_declared = false;
    for line in read.lines() {
        if line.contains("declared:") {
            in_declared = true;
            continue;
        }
        let Some(item) = line.strip_prefix("- ") else {
            in_declared = false;
            continue;
        };
        match item
            .strip_prefix("region ")
            .and_then(|r| r.split(':').next())
        {
            Some(number) if !in_declared => regions.extend(number.trim().parse::<u64>().ok()),
            _ if in_declared => declared.push(item.to_string()),
            _ => {}
        }
    }
    let judged: Vec<Value> = regions
        .iter()
        .enumerate()
        .map(|(i, number)| match declared.get(i) {
            Some(change) => json!({"region": number, "verdict": "intentional",
                "reason": format!("matches the declared change \"{change}\"")}),
            None => json!({"region": number, "verdict": "regression",
                "reason": "changed, and no declared change explains it"}),
        })
        .collect();
    let answer = json!({
        "summary": format!("{} region(s) judged. {proof}", judged.len()),
        "regions": judged,
    });
    Some(crate::schema::fit(schema, &answer, proof))
}
