//! How each model family is asked: the sampling setting and the reasoning setting of every job
//! Vaider gives a model, from each maker's own guidance, in one place. The adapters only write
//! what [`asking`] says in their wire format; docs/providers.md ("How each model is asked")
//! has the same table with the source of every rule.

use crate::settings::Adapter;

/// What a model call is for. The capability that owns a task says which job it is, and the
/// job, not the provider, decides how hard the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Job {
    /// A description of a recording or a screenshot (and the image tools' readings).
    Describe,
    /// Verdicts: expectations checked, a page judged against criteria, a review's regions.
    Judge,
    /// The explanation of a visual comparison between two pictures.
    Compare,
    /// A QA test plan written from requirements.
    Plan,
    /// The next action of a browsing step, one of many in a plan's run.
    Browse,
}

impl Job {
    pub const ALL: [Job; 5] = [
        Job::Describe,
        Job::Judge,
        Job::Compare,
        Job::Plan,
        Job::Browse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Job::Describe => "describe",
            Job::Judge => "judge",
            Job::Compare => "compare",
            Job::Plan => "plan",
            Job::Browse => "browse",
        }
    }

    /// A description asked with expectations is asked for verdicts on them: it is judged.
    pub fn with_expectations(self, any: bool) -> Job {
        match self {
            Job::Describe if any => Job::Judge,
            other => other,
        }
    }

    /// How deep the model should reason for this job, on every family that takes a depth.
    /// - describe, compare: medium. Reading a recording or two pictures is mostly seeing, but
    ///   a step-by-step account and the matching of expected changes need some reasoning;
    ///   high would add seconds to every analysis for little gain.
    /// - judge, plan: high. A verdict decides whether a test passes, and a plan is many steps
    ///   derived from requirements and code: the errors these make cost the user most.
    /// - browse: low. One action among many in a plan's run, each checked by the next step:
    ///   latency adds up over the run, and the choice is simple.
    pub fn effort(self) -> Effort {
        match self {
            Job::Describe | Job::Compare => Effort::Medium,
            Job::Judge | Job::Plan => Effort::High,
            Job::Browse => Effort::Low,
        }
    }
}

/// A depth of reasoning. Only the three levels every current model of each family accepts:
/// Gemini 3.8 Flash and 3.1 Pro refuse `minimal`, GPT-5.1 and later refuse `minimal`, the
/// o-series knows neither `minimal` nor `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}

/// How a request asks the model to reason, in the field its API takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// Gemini 3 and later: `generationConfig.thinkingConfig.thinkingLevel`.
    ThinkingLevel(Effort),
    /// OpenAI's reasoning models: `reasoning_effort`.
    ReasoningEffort(Effort),
    /// Claude 4.6 and later on Anthropic's API: `thinking: {"type": "adaptive"}` with
    /// `output_config.effort`.
    AdaptiveThinking(Effort),
}

/// What one request carries besides its content.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Asking {
    /// None: no temperature is sent, so the model's default applies.
    pub temperature: Option<f64>,
    /// None: nothing is sent, so the model reasons as it does by default.
    pub reasoning: Option<Reasoning>,
}

/// Vaider's temperature where the maker leaves it free: a description that stays close to
/// what is on screen, and much the same answer for the same media (what Vaider sent every
/// model before the families below asked otherwise).
pub const LOW_TEMPERATURE: f64 = 0.2;

/// The families whose makers say how they are to be asked, told apart by the model's name
/// (the same model may be reached through several adapters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// gemini-3.* and later: keep the default temperature (1.0), set a thinking level.
    Gemini3,
    /// Gemini 2.x and older: the old knobs (temperature, thinkingBudget); asked as before.
    GeminiEarlier,
    /// OpenAI's o-series and the GPT-5 family (not its `-chat` models): no temperature but
    /// the default, a reasoning effort.
    OpenAiReasoning,
    /// Claude 4.7 and later (and the unnumbered names, all newer: Mythos, Fable previews):
    /// `temperature`, `top_p` and `top_k` are refused; thinking is adaptive only.
    ClaudeNoSampling,
    /// Claude 4.6: adaptive thinking recommended; a temperature only without thinking.
    ClaudeAdaptive,
    /// Claude before 4.6: manual thinking only (deprecated); asked as before, without it.
    ClaudeEarlier,
    /// Everything else (GPT-4.x, GLM, Qwen, Nova, Llama...): asked as before.
    Other,
}

impl Family {
    pub fn of(model: &str) -> Family {
        let model = model.to_ascii_lowercase();
        if let Some(rest) = after(&model, "gemini-") {
            return match leading_number(rest) {
                Some(major) if major >= 3 => Family::Gemini3,
                _ => Family::GeminiEarlier,
            };
        }
        if let Some(rest) = after(&model, "claude-") {
            return match claude_version(rest) {
                None => Family::ClaudeNoSampling,
                Some(v) if v >= (4, 7) => Family::ClaudeNoSampling,
                Some(v) if v >= (4, 6) => Family::ClaudeAdaptive,
                Some(_) => Family::ClaudeEarlier,
            };
        }
        if is_openai_reasoning(&model) {
            return Family::OpenAiReasoning;
        }
        Family::Other
    }
}

/// How to ask `model`, reached through `adapter`, for `job`.
pub fn asking(adapter: Adapter, model: &str, job: Job) -> Asking {
    let family = Family::of(model);
    let effort = job.effort();
    // A reasoning setting only where the adapter's API carries it for that family, as its
    // maker documents. Elsewhere (Gemini 3 through Google's OpenAI-compatible endpoint,
    // Claude on Bedrock's Converse) the model keeps its default.
    let reasoning = match (family, adapter) {
        (Family::Gemini3, Adapter::Gemini) => Some(Reasoning::ThinkingLevel(effort)),
        (Family::OpenAiReasoning, Adapter::Openai) => Some(Reasoning::ReasoningEffort(effort)),
        (Family::ClaudeNoSampling | Family::ClaudeAdaptive, Adapter::Anthropic) => {
            Some(Reasoning::AdaptiveThinking(effort))
        }
        _ => None,
    };
    let temperature = match family {
        // Google: lower values can make Gemini 3 loop or reason worse. OpenAI's reasoning
        // models and Claude 4.7+ refuse any other value than their default.
        Family::Gemini3 | Family::OpenAiReasoning | Family::ClaudeNoSampling => None,
        // Claude's thinking is not compatible with a changed temperature.
        _ if reasoning.is_some() => None,
        _ => Some(LOW_TEMPERATURE),
    };
    Asking {
        temperature,
        reasoning,
    }
}

/// What follows `marker` in `model`, when the marker starts the name or one of its segments
/// (`models/gemini-3.5-flash`, `us.anthropic.claude-opus-4-7`, `google/gemini-3.8-flash`).
fn after<'a>(model: &'a str, marker: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(at) = model[from..].find(marker) {
        let at = from + at;
        let starts_segment = at == 0 || matches!(model.as_bytes()[at - 1], b'/' | b'.' | b':');
        if starts_segment {
            return Some(&model[at + marker.len()..]);
        }
        from = at + marker.len();
    }
    None
}

/// The number a name part starts with ("3.5-flash" → 3).
fn leading_number(text: &str) -> Option<u32> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A Claude model's version from what follows `claude-`: `opus-4-7` (4.7), `3-5-sonnet-…`
/// (3.5), `opus-4-20250514` (4.0: the date is no minor version), `fable-5` (5.0),
/// `opus-4-6-v1` (4.6, Bedrock), `opus-4-5@20251101` (4.5, Vertex). None without a number.
fn claude_version(rest: &str) -> Option<(u32, u32)> {
    let mut parts = rest.split(['-', '.', '@', ':']);
    let major = parts.by_ref().find_map(small_number)?;
    let minor = parts.next().and_then(small_number).unwrap_or(0);
    Some((major, minor))
}

/// A version number: one or two digits (a date such as 20250514 is none).
fn small_number(part: &str) -> Option<u32> {
    (!part.is_empty() && part.len() <= 2 && part.bytes().all(|b| b.is_ascii_digit()))
        .then(|| part.parse().ok())
        .flatten()
}

/// OpenAI's reasoning models: the o-series and the GPT-5 family, but not the `-chat` models,
/// which are not reasoning models (the same rule as fake-vision's).
fn is_openai_reasoning(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        && !name.contains("chat")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_told_by_the_model_name() {
        for (model, family) in [
            ("gemini-3.5-flash-lite", Family::Gemini3),
            ("models/gemini-3.1-pro-preview", Family::Gemini3),
            ("gemini-3.8-flash", Family::Gemini3),
            ("gemini-4-flash", Family::Gemini3),
            ("gemini-2.5-flash-lite", Family::GeminiEarlier),
            ("gemini-2.0-flash", Family::GeminiEarlier),
            ("gemini-exp-1206", Family::GeminiEarlier),
            ("o4-mini", Family::OpenAiReasoning),
            ("o3", Family::OpenAiReasoning),
            ("gpt-5.2", Family::OpenAiReasoning),
            ("openai/gpt-5-mini", Family::OpenAiReasoning),
            ("gpt-5-chat-latest", Family::Other),
            ("gpt-4.1", Family::Other),
            ("gpt-4o", Family::Other),
            ("glm-4.6v", Family::Other),
            ("qwen2.5vl", Family::Other),
            ("claude-opus-4-7", Family::ClaudeNoSampling),
            ("claude-opus-5", Family::ClaudeNoSampling),
            ("claude-sonnet-5-5", Family::ClaudeNoSampling),
            ("claude-mythos-preview", Family::ClaudeNoSampling),
            ("us.anthropic.claude-opus-4-7", Family::ClaudeNoSampling),
            ("claude-sonnet-4-6", Family::ClaudeAdaptive),
            ("anthropic.claude-opus-4-6-v1", Family::ClaudeAdaptive),
            ("claude-sonnet-4-5", Family::ClaudeEarlier),
            ("claude-opus-4-5@20251101", Family::ClaudeEarlier),
            ("claude-opus-4-20250514", Family::ClaudeEarlier),
            ("claude-3-7-sonnet-20250219", Family::ClaudeEarlier),
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Family::ClaudeEarlier,
            ),
            (
                "anthropic.claude-3-5-sonnet-20241022-v2:0",
                Family::ClaudeEarlier,
            ),
            ("amazon.nova-pro-v1:0", Family::Other),
            ("not-gemini-3", Family::Other),
        ] {
            assert_eq!(Family::of(model), family, "{model}");
        }
    }

    #[test]
    fn gemini_3_keeps_its_temperature_and_thinks_by_the_job() {
        for job in Job::ALL {
            let asked = asking(Adapter::Gemini, "gemini-3.5-flash", job);
            assert_eq!(asked.temperature, None, "{job:?}");
            assert_eq!(
                asked.reasoning,
                Some(Reasoning::ThinkingLevel(job.effort()))
            );
        }
        let level = |job| asking(Adapter::Gemini, "gemini-3.8-flash", job).reasoning;
        assert_eq!(
            level(Job::Judge),
            Some(Reasoning::ThinkingLevel(Effort::High))
        );
        assert_eq!(
            level(Job::Browse),
            Some(Reasoning::ThinkingLevel(Effort::Low))
        );
    }

    #[test]
    fn models_without_guidance_are_asked_as_before() {
        for (adapter, model) in [
            (Adapter::Gemini, "gemini-2.5-flash-lite"),
            (Adapter::Openai, "gpt-4.1"),
            (Adapter::Openai, "glm-4.6v"),
            (Adapter::Anthropic, "claude-sonnet-4-5"),
            (
                Adapter::Bedrock,
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            ),
            (Adapter::Bedrock, "amazon.nova-pro-v1:0"),
        ] {
            for job in Job::ALL {
                assert_eq!(
                    asking(adapter, model, job),
                    Asking {
                        temperature: Some(LOW_TEMPERATURE),
                        reasoning: None
                    },
                    "{model} {job:?}"
                );
            }
        }
    }

    #[test]
    fn reasoning_models_that_refuse_a_temperature_get_none() {
        for (adapter, model, reasoning) in [
            (
                Adapter::Openai,
                "o4-mini",
                Some(Reasoning::ReasoningEffort(Effort::High)),
            ),
            (Adapter::Openai, "gemini-3.5-flash", None),
            (
                Adapter::Anthropic,
                "claude-opus-4-7",
                Some(Reasoning::AdaptiveThinking(Effort::High)),
            ),
            (
                Adapter::Anthropic,
                "claude-sonnet-4-6",
                Some(Reasoning::AdaptiveThinking(Effort::High)),
            ),
            (Adapter::Bedrock, "us.anthropic.claude-opus-4-7", None),
        ] {
            let asked = asking(adapter, model, Job::Judge);
            assert_eq!(asked.temperature, None, "{model}");
            assert_eq!(asked.reasoning, reasoning, "{model}");
        }
        // Claude 4.6 on Bedrock gets no thinking, so it keeps Vaider's temperature.
        let bedrock_46 = asking(Adapter::Bedrock, "anthropic.claude-sonnet-4-6", Job::Judge);
        assert_eq!(bedrock_46.temperature, Some(LOW_TEMPERATURE));
    }

    #[test]
    fn expectations_make_a_description_a_judgement() {
        assert_eq!(Job::Describe.with_expectations(true), Job::Judge);
        assert_eq!(Job::Describe.with_expectations(false), Job::Describe);
        assert_eq!(Job::Compare.with_expectations(true), Job::Compare);
    }
}
