//! The fake's answers to a validated `generateContent` request: the text (a reply set by the
//! test, JSON built from the requested schema, or steps that prove which media bytes arrived),
//! the usage counted as Gemini counts it, and the unary, streamed, blocked and cut-short
//! response bodies. Checking the request is `generate/request.rs`'s job; this one only answers.

use serde_json::{json, Value};

use crate::generate::{is_pro, thinking_model, Prompt};
use crate::media::{self, Modality};
use crate::schema;

/// The model's output before it is cut into responses.
pub(crate) struct Answer {
    thought: Option<String>,
    text: Option<String>,
    finish: &'static str,
    /// Tokens of `text`, per candidate.
    text_tokens: u64,
    thought_tokens: u64,
}

fn mmss(secs: f64) -> String {
    let s = secs.max(0.0).floor() as u64;
    format!("{:02}:{:02}", s / 60, s % 60)
}

fn proof_lines(prompt: &Prompt) -> Vec<String> {
    prompt
        .media
        .iter()
        .enumerate()
        .map(|(i, m)| {
            format!(
                "media {}: {}, {} bytes, sha256 {}",
                i + 1,
                m.mime,
                m.size,
                m.sha_hex
            )
        })
        .collect()
}

fn steps(prompt: &Prompt) -> Vec<String> {
    let d = prompt
        .media
        .iter()
        .find(|m| m.modality == Modality::Video)
        .map(|m| m.duration.unwrap_or(media::DEFAULT_VIDEO_SECS))
        .unwrap_or(media::DEFAULT_VIDEO_SECS);
    vec![
        format!("{} The login page is shown.", mmss(0.0)),
        format!(
            "{} The user types an e-mail address and a password.",
            mmss(d / 3.0)
        ),
        format!(
            "{} The user clicks \"Sign in\" and the dashboard appears.",
            mmss(2.0 * d / 3.0)
        ),
    ]
}

fn prompt_echo(prompt: &Prompt) -> String {
    prompt
        .user_text
        .chars()
        .take(200)
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect()
}

/// The default answer text (or JSON when the request asks for it).
fn default_text(prompt: &Prompt) -> String {
    let proofs = proof_lines(prompt);
    let steps = steps(prompt);
    let sentence = if proofs.is_empty() {
        format!("No media was attached. {}", steps[0])
    } else {
        format!("{}. {}", proofs.join("; "), steps[0])
    };
    let mime = prompt
        .config
        .response_mime
        .as_deref()
        .unwrap_or("text/plain");
    match (mime, &prompt.config.schema) {
        ("text/x.enum", Some(s)) => match schema::example(s, &sentence) {
            Value::String(v) => v,
            other => other.to_string(),
        },
        ("application/json", Some(s)) => scripted(s, prompt, &sentence)
            .unwrap_or_else(|| schema::example(s, &sentence))
            .to_string(),
        ("application/json", None) => json!({
            "summary": sentence,
            "prompt": prompt_echo(prompt),
            "media": prompt.media.iter().enumerate().map(|(i, m)| json!({
                "index": i + 1,
                "mimeType": m.mime,
                "sizeBytes": m.size,
                "sha256": m.sha_hex,
            })).collect::<Vec<_>>(),
            "steps": steps,
        })
        .to_string(),
        _ => {
            let mut lines = if proofs.is_empty() {
                vec!["media: none".to_string()]
            } else {
                proofs
            };
            lines.push(format!("prompt: {}", prompt_echo(prompt)));
            lines.extend(steps);
            lines.join("\n")
        }
    }
}

/// The answers a test can predict, when the request is one they script: a page judgement
/// (`judge`), a browsing action (`browse`), a test plan (`planner`), a review's verdicts
/// (`review`) or a failed test's step (`failure`).
fn scripted(schema: &Value, prompt: &Prompt, proof: &str) -> Option<Value> {
    let read = &prompt.read;
    if let Some(watched) = crate::failure::watched(schema, prompt, proof) {
        return Some(watched);
    }
    if crate::planner::asks_for_plan(schema) {
        return Some(crate::planner::plan(read, schema, proof));
    }
    if let Some(verdicts) = crate::review::verdicts(schema, read, proof) {
        return Some(verdicts);
    }
    if let Some(judged) = crate::judge::judgement(schema, read) {
        return Some(crate::judge::with_proof(judged, schema, proof));
    }
    crate::browse::decision(schema, read).map(|next| crate::browse::with_proof(next, schema, proof))
}

pub(crate) fn build_answer(prompt: &Prompt, reply_text: Option<String>, model: &str) -> Answer {
    let cfg = &prompt.config;
    let mut text = reply_text.unwrap_or_else(|| default_text(prompt));
    let mut finish = "STOP";
    if let Some(cut) = cfg.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
        text.truncate(cut);
    }

    // Thinking models think first, and the thoughts share the output budget.
    let mut thought_tokens = 0;
    if thinking_model(model) && cfg.thinking_budget != Some(0) {
        let base = 120 + 60 * prompt.media.len() as u64;
        let mut t = if is_pro(model) { 2 * base } else { base };
        if matches!(cfg.thinking_level.as_deref(), Some("low" | "minimal")) {
            t /= 2;
        }
        if let Some(b) = cfg.thinking_budget.filter(|b| *b > 0) {
            t = t.min(b as u64);
        }
        thought_tokens = t;
    }
    let max = cfg
        .max_output
        .unwrap_or(if thinking_model(model) { 65_536 } else { 8_192 });
    let mut text_out = Some(text);
    let mut text_tokens = 0;
    if thought_tokens >= max {
        thought_tokens = max;
        text_out = None;
        finish = "MAX_TOKENS";
    } else if let Some(t) = &mut text_out {
        let room = max - thought_tokens;
        text_tokens = crate::generate::text_tokens(t).max(1);
        if text_tokens > room {
            *t = t.chars().take((room * 4) as usize).collect();
            text_tokens = room;
            finish = "MAX_TOKENS";
        }
    }
    let thought = (cfg.include_thoughts && thought_tokens > 0).then(|| {
        format!(
            "**Checking the recording**\n\nI look at the {} media part(s) and the prompt, then \
             describe what happens step by step.",
            prompt.media.len()
        )
    });
    Answer {
        thought,
        text: text_out,
        finish,
        text_tokens,
        thought_tokens,
    }
}

fn usage(prompt: &Prompt, candidates_tokens: u64, thought_tokens: u64) -> Value {
    let p = prompt.prompt_tokens();
    let mut u = json!({ "promptTokenCount": p });
    if candidates_tokens > 0 {
        u["candidatesTokenCount"] = json!(candidates_tokens);
    }
    u["totalTokenCount"] = json!(p + candidates_tokens + thought_tokens);
    u["promptTokensDetails"] = prompt.details();
    if thought_tokens > 0 {
        u["thoughtsTokenCount"] = json!(thought_tokens);
    }
    u
}

fn content(parts: Vec<Value>) -> Value {
    if parts.is_empty() {
        json!({ "role": "model" })
    } else {
        json!({ "parts": parts, "role": "model" })
    }
}

pub(crate) fn unary_response(prompt: &Prompt, a: &Answer, model: &str, response_id: &str) -> Value {
    let mut parts = Vec::new();
    if let Some(t) = &a.thought {
        parts.push(json!({ "text": t, "thought": true }));
    }
    if let Some(t) = &a.text {
        parts.push(json!({ "text": t }));
    }
    let candidates: Vec<Value> = (0..prompt.config.candidates)
        .map(|i| {
            json!({
                "content": content(parts.clone()),
                "finishReason": a.finish,
                "index": i,
            })
        })
        .collect();
    json!({
        "candidates": candidates,
        "usageMetadata": usage(prompt, a.text_tokens * prompt.config.candidates, a.thought_tokens),
        "modelVersion": model,
        "responseId": response_id,
    })
}

/// Cut `text` into up to three pieces at whitespace.
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 24 {
        return vec![text.to_string()];
    }
    let mut cuts = vec![0];
    for k in 1..3 {
        let mut at = chars.len() * k / 3;
        while at < chars.len() && !chars[at].is_whitespace() {
            at += 1;
        }
        if at > *cuts.last().unwrap_or(&0) && at < chars.len() {
            cuts.push(at);
        }
    }
    cuts.push(chars.len());
    cuts.windows(2)
        .map(|w| chars[w[0]..w[1]].iter().collect())
        .collect()
}

/// The streamed responses: thoughts first, then the text in pieces; full usage in the last.
pub(crate) fn stream_responses(
    prompt: &Prompt,
    a: &Answer,
    model: &str,
    response_id: &str,
) -> Vec<Value> {
    let mut chunks: Vec<Vec<Value>> = Vec::new();
    if let Some(t) = &a.thought {
        chunks.push(vec![json!({ "text": t, "thought": true })]);
    }
    if let Some(t) = &a.text {
        for piece in pieces(t) {
            chunks.push(vec![json!({ "text": piece })]);
        }
    }
    if chunks.is_empty() {
        chunks.push(Vec::new());
    }
    let last = chunks.len() - 1;
    let n = prompt.config.candidates;
    chunks
        .into_iter()
        .enumerate()
        .map(|(k, parts)| {
            let candidates: Vec<Value> = (0..n)
                .map(|i| {
                    let mut c = json!({ "content": content(parts.clone()), "index": i });
                    if k == last {
                        c["finishReason"] = json!(a.finish);
                    }
                    c
                })
                .collect();
            let usage = if k == last {
                usage(prompt, a.text_tokens * n, a.thought_tokens)
            } else {
                let p = prompt.prompt_tokens();
                json!({
                    "promptTokenCount": p,
                    "totalTokenCount": p,
                    "promptTokensDetails": prompt.details(),
                })
            };
            json!({
                "candidates": candidates,
                "usageMetadata": usage,
                "modelVersion": model,
                "responseId": response_id,
            })
        })
        .collect()
}

fn safety_ratings(blocked: bool) -> Value {
    json!([
        {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": if blocked { "HIGH" } else { "NEGLIGIBLE" }, "blocked": blocked},
    ])
}

pub(crate) fn blocked_response(
    prompt: &Prompt,
    reason: &str,
    model: &str,
    response_id: &str,
) -> Value {
    json!({
        "promptFeedback": {
            "blockReason": reason,
            "safetyRatings": safety_ratings(reason == "SAFETY"),
        },
        "usageMetadata": usage(prompt, 0, 0),
        "modelVersion": model,
        "responseId": response_id,
    })
}

pub(crate) fn finish_only_response(
    prompt: &Prompt,
    reason: &str,
    model: &str,
    response_id: &str,
) -> Value {
    let mut candidate = json!({ "finishReason": reason, "index": 0 });
    if reason == "SAFETY" {
        candidate["safetyRatings"] = safety_ratings(true);
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage(prompt, 0, 0),
        "modelVersion": model,
        "responseId": response_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_rejoin() {
        let t = "one two three four five six seven eight nine ten eleven twelve";
        let p = pieces(t);
        assert!(p.len() > 1);
        assert_eq!(p.concat(), t);
    }
}
