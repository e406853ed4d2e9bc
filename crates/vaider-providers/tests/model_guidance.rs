//! Each model family asked as its maker's guidance says, through the real HTTP path: every
//! adapter sends one request per job to its fake, which checks it against the family's rules
//! and answers like the real service. Gemini 3 keeps its default temperature and gets the
//! job's thinking level; Gemini 2.x is asked exactly as before; OpenAI's reasoning models get
//! no temperature but an effort; Claude 4.7 and later no temperature, and on Anthropic's API
//! adaptive thinking; the others keep Vaider's 0.2.

use std::time::{Duration, Instant};

use fake_gemini::FakeGemini;
use fake_vision::{FakeAnthropic, FakeBedrock, FakeOpenAi};
use serde_json::{json, Value};
use vaider_base::error::VaiderError;
use vaider_base::progress::NoProgress;
use vaider_base::secrets::ApiKey;
use vaider_media::image_fit::FittedImage;
use vaider_providers::aws::AwsChoice;
use vaider_providers::guidance::Job;
use vaider_providers::provider::anthropic::AnthropicProvider;
use vaider_providers::provider::bedrock::BedrockProvider;
use vaider_providers::provider::gemini::GeminiProvider;
use vaider_providers::provider::openai::OpenAiProvider;
use vaider_providers::provider::{
    MediaPart, ProviderAnswer, ProviderJob, Upstream, VisionProvider,
};
use vaider_providers::quota::{Deadline, Quotas};
use vaider_providers::settings::GeminiConfig;

const SYSTEM: &str = "You look at screenshots of GUIs.";
const PROMPT: &str = "Does the page show the basket?";

/// The job each capability's task names, and the thinking depth it is asked with.
const JOBS: [(Job, &str); 5] = [
    (Job::Describe, "medium"),
    (Job::Judge, "high"),
    (Job::Compare, "medium"),
    (Job::Plan, "high"),
    (Job::Browse, "low"),
];

fn png() -> Vec<u8> {
    let picture = image::RgbImage::from_fn(64, 48, |x, y| {
        image::Rgb([(x * 4) as u8, (y * 5) as u8, 120])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

fn screenshot() -> MediaPart {
    MediaPart::Image {
        image: FittedImage {
            mime_type: "image/png",
            bytes: png(),
            width: 64,
            height: 48,
            adapted: None,
        },
        label: None,
        keyframe: false,
    }
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"passed": {"type": "boolean"}},
           "required": ["passed"], "additionalProperties": false})
}

fn upstream(service: &str, base_url: String) -> Upstream {
    Upstream {
        http: reqwest::Client::new(),
        max_attempts: 1,
        retry_base: Duration::from_millis(10),
        service: service.to_string(),
        base_url,
    }
}

/// One call of `job` to `model` through `provider`, with a screenshot and an answer schema.
async fn ask(
    provider: &dyn VisionProvider,
    model: &str,
    job: Job,
) -> Result<ProviderAnswer, VaiderError> {
    let quotas = Quotas::default();
    let deadline = Deadline::new(Instant::now() + Duration::from_secs(30));
    let meter = quotas.meter(provider.name(), None, model, 0, &deadline);
    let stop = tokio_util::sync::CancellationToken::new();
    let parts = [screenshot()];
    provider
        .describe(ProviderJob {
            parts: &parts,
            model,
            job,
            system_prompt: SYSTEM,
            user_prompt: PROMPT,
            user_prompt_with: &|_| PROMPT.to_string(),
            response_schema: Some(schema()),
            progress: &NoProgress,
            deadline: deadline.at(),
            meter: &meter,
            interaction_id: "guidance-test",
            stop: &stop,
        })
        .await
}

fn gemini(fake: &FakeGemini) -> GeminiProvider {
    GeminiProvider::new(
        upstream("gemini", fake.base_url()),
        &GeminiConfig::default(),
        ApiKey::new(FakeGemini::API_KEY),
    )
}

#[tokio::test]
async fn a_gemini_3_request_keeps_the_default_temperature_and_thinks_by_the_job() {
    let fake = FakeGemini::start().await;
    let provider = gemini(&fake);
    for model in [
        "gemini-3.5-flash-lite",
        "gemini-3.5-flash",
        "gemini-3.8-flash",
        "gemini-3.1-pro-preview",
    ] {
        for (job, level) in JOBS {
            let answer = ask(&provider, model, job).await;
            assert!(answer.is_ok(), "{model} {job:?}: {answer:?}");
            let body = fake.generate_requests().pop().unwrap();
            let config = &body["generationConfig"];
            assert!(config.get("temperature").is_none(), "{model}: {config}");
            assert_eq!(
                config["thinkingConfig"],
                json!({"thinkingLevel": level}),
                "{model} {job:?}"
            );
        }
    }
    // The fake held every request to Gemini 3's guidance and found nothing to note.
    assert_eq!(fake.guidance_notes(), Vec::<String>::new());
}

#[tokio::test]
async fn a_gemini_2_request_is_unchanged() {
    use base64::Engine as _;
    let fake = FakeGemini::start().await;
    let provider = gemini(&fake);
    let data = base64::engine::general_purpose::STANDARD.encode(png());
    // The body Vaider sent every Gemini model before: temperature 0.2, no thinking settings.
    let expected = json!({
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": data}},
            {"text": PROMPT},
        ]}],
        "generationConfig": {
            "temperature": 0.2,
            "responseMimeType": "application/json",
            "responseJsonSchema": schema(),
        },
    });
    for (job, _) in JOBS {
        let answer = ask(&provider, "gemini-2.5-flash-lite", job).await;
        assert!(answer.is_ok(), "{job:?}: {answer:?}");
        assert_eq!(fake.generate_requests().pop().unwrap(), expected, "{job:?}");
    }
}

#[tokio::test]
async fn an_openai_reasoning_model_gets_no_temperature_but_the_jobs_effort() {
    let fake = FakeOpenAi::start().await;
    let provider = OpenAiProvider::new(
        upstream("openai", fake.base_url()),
        Some(ApiKey::new(FakeOpenAi::API_KEY)),
    );
    for model in ["o4-mini", "gpt-5-mini", "gpt-5.2"] {
        for (job, effort) in JOBS {
            let answer = ask(&provider, model, job).await;
            assert!(answer.is_ok(), "{model} {job:?}: {answer:?}");
            let body = fake.requests().pop().unwrap();
            assert!(body.get("temperature").is_none(), "{model}: {body}");
            assert_eq!(body["reasoning_effort"], effort, "{model} {job:?}");
        }
    }
    // A model that is not a reasoning model is asked as before, and would refuse an effort.
    ask(&provider, "gpt-4.1", Job::Judge).await.unwrap();
    let body = fake.requests().pop().unwrap();
    assert_eq!(body["temperature"], 0.2);
    assert!(body.get("reasoning_effort").is_none(), "{body}");
}

#[tokio::test]
async fn claude_4_7_gets_no_temperature_and_thinks_adaptively_by_the_job() {
    let fake = FakeAnthropic::start().await;
    let provider = AnthropicProvider::new(
        upstream("anthropic", fake.base_url()),
        ApiKey::new(FakeAnthropic::API_KEY),
    );
    for model in ["claude-opus-4-7", "claude-sonnet-4-6", "claude-opus-5"] {
        for (job, effort) in JOBS {
            let answer = ask(&provider, model, job).await;
            let answer = answer.unwrap_or_else(|e| panic!("{model} {job:?}: {e}"));
            // The answer's text is read past the thinking block the model starts with.
            assert!(answer.text.contains("passed"), "{}", answer.text);
            let body = fake.requests().pop().unwrap();
            assert!(body.get("temperature").is_none(), "{model}: {body}");
            assert_eq!(body["thinking"], json!({"type": "adaptive"}), "{model}");
            assert_eq!(body["output_config"], json!({"effort": effort}), "{model}");
            assert_eq!(body["max_tokens"], 16_000, "{model}");
        }
    }
    // Claude 4.5 and earlier are asked as before.
    ask(&provider, "claude-sonnet-4-5", Job::Judge)
        .await
        .unwrap();
    let body = fake.requests().pop().unwrap();
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["max_tokens"], 4096);
    assert!(body.get("thinking").is_none(), "{body}");
}

#[tokio::test]
async fn bedrock_sends_claude_4_7_no_temperature() {
    let fake = FakeBedrock::start().await;
    let env = |name: &str| match name {
        "AWS_ACCESS_KEY_ID" => Some(FakeBedrock::ACCESS_KEY_ID.to_string()),
        "AWS_SECRET_ACCESS_KEY" => Some(FakeBedrock::SECRET_ACCESS_KEY.to_string()),
        _ => None,
    };
    let provider = BedrockProvider::with_env(
        upstream("bedrock", fake.base_url()),
        AwsChoice {
            profile: None,
            region: Some(FakeBedrock::REGION.to_string()),
        },
        Box::new(env),
    );
    for (model, temperature) in [
        ("us.anthropic.claude-opus-4-7", None),
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", Some(0.2)),
    ] {
        for (job, _) in JOBS {
            let answer = ask(&provider, model, job).await;
            assert!(answer.is_ok(), "{model} {job:?}: {answer:?}");
            let body = fake.requests().pop().unwrap();
            let config = &body["inferenceConfig"];
            assert_eq!(
                config.get("temperature").and_then(Value::as_f64),
                temperature
            );
            assert_eq!(config["maxTokens"], 4096);
        }
    }
}
