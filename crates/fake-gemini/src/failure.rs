//! A scripted watcher of a failed test, so tests can check end to end that the stretch around
//! the failing step reaches the model: a request whose schema asks for `first_wrong_step` is
//! answered by a rule a test can predict. The steps are read from the text as a model reads
//! them (lines shaped `- step 3 'add the chair': 00:04.2 to 00:06.0`, the one that failed
//! saying `failed`); the step named is the last failed one, and only when the video part's
//! clip (its `videoMetadata` offsets, as received) covers that step's time. A clip that
//! misses it gets an answer that says so and names no step. The answer fits the schema sent
//! and carries the proof of which media bytes arrived.

use serde_json::{json, Value};

use crate::generate::Prompt;
use crate::media::Modality;

/// A step as the text lists it.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    number: u64,
    title: String,
    start: f64,
    end: f64,
    failed: bool,
}

/// The answer, when the request asks where a failed test went wrong.
pub(crate) fn watched(schema: &Value, prompt: &Prompt, proof: &str) -> Option<Value> {
    let props = &schema["properties"];
    if !props["first_wrong_step"]["type"]
        .as_str()?
        .eq_ignore_ascii_case("integer")
    {
        return None;
    }
    let steps: Vec<Step> = prompt.read.lines().filter_map(step).collect();
    let failed = steps.iter().rev().find(|s| s.failed);
    let clip = prompt
        .media
        .iter()
        .find(|m| m.modality == Modality::Video)
        .map(|m| m.clip.unwrap_or((0.0, f64::INFINITY)));
    let answer = match (failed, clip) {
        (Some(step), Some((from, to))) if from <= step.start + 0.05 && to >= step.end - 0.05 => {
            json!({
                "description": format!("The clip {from:.1}-{to:.1} s shows step {} '{}'. {proof}", step.number, step.title),
                "screen_at_failure": format!("At {}, step {} '{}': the screen does not show what the step waited for. {proof}", mmss(step.start), step.number, step.title),
                "expected": format!("what step {} '{}' expected", step.number, step.title),
                "first_wrong_at": mmss(step.start),
                "first_wrong_step": step.number,
                "cause": format!("step {} '{}' found the screen other than it expected", step.number, step.title),
            })
        }
        (Some(step), clip) => json!({
            "description": format!("The video received does not show step {}. {proof}", step.number),
            "screen_at_failure": format!(
                "the video received ({}) does not show step {} ({:.1}-{:.1} s)",
                clip.map_or("none".to_string(), |(a, b)| format!("{a:.1}-{b:.1} s")),
                step.number, step.start, step.end
            ),
            "expected": "",
            "first_wrong_at": "",
            "first_wrong_step": 0,
            "cause": "unknown: the failing step was not seen",
        }),
        (None, _) => json!({
            "description": format!("No failed step was listed. {proof}"),
            "screen_at_failure": "no step is listed as failed",
            "expected": "",
            "first_wrong_at": "",
            "first_wrong_step": 0,
            "cause": "unknown",
        }),
    };
    Some(crate::schema::fit(schema, &answer, proof))
}

/// `- step 3 'add the chair': 00:04.2 to 00:06.0, failed: …`
fn step(line: &str) -> Option<Step> {
    let rest = line.strip_prefix("- step ")?;
    let (number, rest) = rest.split_once(' ')?;
    let number = number.parse().ok()?;
    let rest = rest.strip_prefix('\'')?;
    let (title, rest) = rest.rsplit_once("': ")?;
    let mut words = rest.split([' ', ',']).filter(|w| !w.is_empty());
    let start = seconds(words.next()?)?;
    let end = match (words.next(), words.next()) {
        (Some("to"), Some(end)) => seconds(end)?,
        _ => start,
    };
    Some(Step {
        number,
        title: title.to_string(),
        start,
        end,
        failed: rest.contains("failed"),
    })
}

/// `mm:ss.s` in seconds.
fn seconds(text: &str) -> Option<f64> {
    let (minutes, secs) = text.split_once(':')?;
    Some(minutes.parse::<f64>().ok()? * 60.0 + secs.parse::<f64>().ok()?)
}

fn mmss(seconds: f64) -> String {
    let tenths = (seconds.max(0.0) * 10.0).round() as u64;
    format!(
        "{:02}:{:02}.{}",
        tenths / 600,
        (tenths % 600) / 10,
        tenths % 10
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_read_from_their_lines() {
        let s = step("- step 3 'add the chair': 00:04.2 to 00:06.0, failed: Timed out").unwrap();
        assert_eq!(
            s,
            Step {
                number: 3,
                title: "add the chair".into(),
                start: 4.2,
                end: 6.0,
                failed: true
            }
        );
        let s = step("- step 12 'it's here': 01:02.5 to 01:03.0").unwrap();
        assert_eq!(
            (s.number, s.title.as_str(), s.start, s.failed),
            (12, "it's here", 62.5, false)
        );
        assert!(step("- region 2: 10, 10").is_none());
        assert_eq!(mmss(62.46), "01:02.5");
    }
}
