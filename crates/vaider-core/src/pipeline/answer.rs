//! Reading the model's answer: the description, one verdict per expectation in the order
//! given, the tool's structured details, and the result every door returns, with its usage,
//! cost and the frames the model looked at.

use std::path::Path;

use super::call::Call;
use super::prepare::Prepared;
use crate::analysis::{AnalysisResult, ExpectationVerdict, Tool, Verdict};
use crate::media::{MediaInfo, MediaKind};
use crate::provider::{MediaPart, ProviderAnswer};
use crate::sampling::SamplingReport;
use crate::{cost, keyframes, prompts, tokens};

/// What the result is built from, besides the call and the answer.
pub(super) struct Answered<'a> {
    pub answer: &'a ProviderAnswer,
    pub prepared: &'a Prepared,
    pub media: &'a MediaInfo,
    pub media_path: &'a Path,
    pub log_dir: &'a Path,
}

pub(super) async fn result(call: &Call, answered: Answered<'_>) -> AnalysisResult {
    let Answered {
        answer,
        prepared,
        media,
        media_path,
        log_dir,
    } = answered;
    let (description, expectations, details) =
        read_answer(call.request.tool, &answer.text, &call.request.expectations);
    let all_met =
        (!expectations.is_empty()).then(|| expectations.iter().all(|e| e.verdict == Verdict::Met));
    // The default sampling would send the same prompt but for the note about the moments.
    let without_note = answer
        .usage
        .input_tokens
        .saturating_sub(note_tokens(call, prepared));
    AnalysisResult {
        description,
        all_expectations_met: all_met,
        expectations,
        provider: call.provider.clone(),
        model: answer
            .model_version
            .clone()
            .unwrap_or_else(|| call.model.clone()),
        duration_ms: call.elapsed_ms(),
        cost_usd: cost::cost_usd(&call.config, &call.model, answer.usage),
        usage: answer.usage,
        cached: false,
        interaction_id: call.id.clone(),
        log_dir: log_dir.display().to_string(),
        media_path: media_path.display().to_string(),
        media_type: media.mime_type.to_string(),
        frames_analysed: frames_analysed(answer, prepared, media, media_path).await,
        details,
        adaptations: prepared.adaptations.clone(),
        sampling: prepared
            .sampling
            .as_ref()
            .map(|sampled| match &sampled.plan {
                Some(plan) => SamplingReport::of(sampled.requested, plan, without_note),
                None => SamplingReport::whole(
                    sampled.requested,
                    answer.usage.input_tokens,
                    sampled.reason.clone(),
                ),
            }),
    }
}

/// The estimated tokens the note about the frames or clips adds to the user prompt.
fn note_tokens(call: &Call, prepared: &Prepared) -> u64 {
    let sent = prepared.sent.as_ref().and_then(|s| s.note.as_deref());
    let Some(note) = sent.or(prepared.note.as_deref()) else {
        return 0;
    };
    let with = tokens::text_tokens(&call.prompts.user(Some(note)));
    with.saturating_sub(tokens::text_tokens(&call.prompts.user(None)))
}

/// Gemini's default sampling of a whole video: one frame a second.
const GEMINI_FRAMES_PER_SECOND: f64 = 1.0;

/// The frames the model was given: the keyframes or clip frames sent; for a whole video, its seconds at the
/// provider's sampling rate (the length the provider reports, else the file's own); one per
/// image otherwise.
async fn frames_analysed(
    answer: &ProviderAnswer,
    prepared: &Prepared,
    media: &MediaInfo,
    media_path: &Path,
) -> u64 {
    match (media.kind, prepared.frames_sent) {
        (MediaKind::Video, Some(frames)) => frames,
        (MediaKind::Video, None) => {
            let seconds = match answer.video_seconds {
                Some(seconds) => Some(seconds),
                None => keyframes::duration_seconds(media_path).await,
            };
            match seconds {
                Some(seconds) => (seconds * GEMINI_FRAMES_PER_SECOND).ceil().max(1.0) as u64,
                // Without a length: about 300 tokens for each second of video.
                None => (answer.usage.input_tokens / 300).max(1),
            }
        }
        (MediaKind::Image, _) => {
            let images = prepared
                .parts
                .iter()
                .filter(|p| matches!(p, MediaPart::Image { .. }))
                .count();
            images.max(prepared.parts.len()) as u64
        }
    }
}

/// Splits the model's answer into description, verdicts and the tool's structured details.
/// An answer that should be JSON but is not still yields its text and "unclear" verdicts.
fn read_answer(
    tool: Tool,
    text: &str,
    expectations: &[String],
) -> (String, Vec<ExpectationVerdict>, Option<serde_json::Value>) {
    if prompts::response_schema(tool, !expectations.is_empty()).is_none() {
        return (text.trim().to_string(), Vec::new(), None);
    }
    let trimmed = text
        .trim()
        .trim_start_matches("```json")
        .trim_start_matches("```")
        .trim_end_matches("```")
        .trim();
    let mut object = match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => serde_json::Map::new(),
    };
    let parsed = !object.is_empty();
    let description = match object.remove("description") {
        Some(serde_json::Value::String(d)) if !d.trim().is_empty() => d,
        _ if parsed => ["artifact", "text"]
            .iter()
            .find_map(|k| object.get(*k).and_then(|v| v.as_str()).map(str::to_string))
            .unwrap_or_default(),
        _ => text.trim().to_string(),
    };
    let items = match object.remove("expectations") {
        Some(serde_json::Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let verdicts = expectations
        .iter()
        .enumerate()
        .map(|(i, expectation)| {
            let item = items.get(i);
            let verdict = match item.and_then(|it| it["verdict"].as_str()) {
                Some("met") => Verdict::Met,
                Some("not_met") => Verdict::NotMet,
                _ => Verdict::Unclear,
            };
            ExpectationVerdict {
                expectation: expectation.clone(),
                verdict,
                evidence: item
                    .and_then(|it| it["evidence"].as_str())
                    .filter(|e| !e.is_empty())
                    .unwrap_or("The model gave no verdict for this expectation.")
                    .to_string(),
            }
        })
        .collect();
    let details = (!object.is_empty()).then_some(serde_json::Value::Object(object));
    (description, verdicts, details)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tools;

    #[test]
    fn verdicts_follow_the_expectations_in_order() {
        let expectations = vec!["login succeeds".to_string(), "an error shows".to_string()];
        let answer = r#"{"description":"00:01 login","expectations":[
            {"expectation":"login succeeds","verdict":"met","evidence":"00:04 dashboard"},
            {"expectation":"an error shows","verdict":"not_met","evidence":"no error"}]}"#;
        let (description, verdicts, details) =
            read_answer(tools::ANALYZE_VIDEO, answer, &expectations);
        assert_eq!(description, "00:01 login");
        assert_eq!(verdicts[0].verdict, Verdict::Met);
        assert_eq!(verdicts[1].verdict, Verdict::NotMet);
        assert_eq!(verdicts[1].evidence, "no error");
        assert_eq!(details, None);
    }

    #[test]
    fn a_non_json_answer_keeps_its_text_and_is_unclear() {
        let expectations = vec!["x".to_string()];
        let (description, verdicts, _) =
            read_answer(tools::ANALYZE_VIDEO, "plain words", &expectations);
        assert_eq!(description, "plain words");
        assert_eq!(verdicts[0].verdict, Verdict::Unclear);
    }

    #[test]
    fn a_tools_structured_fields_become_details() {
        let answer = r#"{"description":"two differences","matches":false,"differences":[{"region":"header","description":"blue not red","severity":"high","suggested_fix":"set color"}]}"#;
        let (description, _, details) = read_answer(tools::UI_DIFF_CHECK, answer, &[]);
        assert_eq!(description, "two differences");
        let details = details.unwrap();
        assert_eq!(details["matches"], false);
        assert_eq!(details["differences"][0]["severity"], "high");
    }
}
