//! Reading Gemini's answer: the description without the model's thoughts, the tokens billed
//! (thoughts included), and a blocked answer as an error that says why.

use serde_json::Value;

use super::*;

pub(super) fn parse_answer(
    answer: Value,
    video_seconds: Option<f64>,
    calls: Vec<UpstreamCall>,
) -> Result<ProviderAnswer, VaiderError> {
    let candidate = &answer["candidates"][0];
    let text: String = candidate["content"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| !p["thought"].as_bool().unwrap_or(false))
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default();
    if text.trim().is_empty() {
        let reason = answer["promptFeedback"]["blockReason"]
            .as_str()
            .or_else(|| candidate["finishReason"].as_str())
            .unwrap_or("no text in the answer");
        return Err(VaiderError::Upstream {
            message: format!(
                "Gemini gave no description ({reason}). Rephrase the prompt or try another model."
            ),
            response: Some(UpstreamResponse {
                status: 200,
                body: answer.to_string(),
            }),
        });
    }
    let usage = &answer["usageMetadata"];
    // Thinking tokens are billed as output.
    let output = usage["candidatesTokenCount"].as_u64().unwrap_or(0)
        + usage["thoughtsTokenCount"].as_u64().unwrap_or(0);
    Ok(ProviderAnswer {
        text,
        usage: Usage {
            input_tokens: usage["promptTokenCount"].as_u64().unwrap_or(0),
            output_tokens: output,
            estimated_input_tokens: None,
        },
        model_version: answer["modelVersion"].as_str().map(str::to_string),
        video_seconds,
        raw_response: answer,
        calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn thoughts_are_not_part_of_the_description_but_are_billed() {
        let answer = json!({"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"00:01 Login page."}]},"finishReason":"STOP"}],
            "usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"thoughtsTokenCount":5}});
        let parsed = parse_answer(answer, None, vec![]).unwrap();
        assert_eq!(parsed.text, "00:01 Login page.");
        assert_eq!(
            parsed.usage,
            Usage {
                input_tokens: 100,
                output_tokens: 15,
                estimated_input_tokens: None,
            }
        );
    }

    #[test]
    fn a_blocked_answer_is_an_error_that_says_why() {
        let answer = json!({"promptFeedback":{"blockReason":"SAFETY"}});
        let err = parse_answer(answer, None, vec![]).unwrap_err();
        assert!(err.to_string().contains("SAFETY"));
    }
}
