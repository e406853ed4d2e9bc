//! Property tests: whatever a client sends, it gets an answer. Arbitrary bytes and JSON bodies
//! go to `POST /v1/analyse` over real HTTP, and arbitrary argument objects to every MCP tool
//! through rmcp's client, against a real server and the fake Gemini. Each must be answered (a
//! 200, or a 4xx/5xx in the contract's `{"error": {"code", "message"}}` shape; a tool result or
//! a JSON-RPC error), never by a dropped connection or silence, and never by the panic net
//! (`panics::ANSWER`): a caught panic is still a bug. Afterwards no history row is `running`.
//!
//! CI runs a modest, fixed set of cases (a fixed seed, so every run tries the same inputs). To
//! search longer locally: `PROPTEST_CASES=2000 PROPTEST_RNG_SEED=$RANDOM cargo nextest run -p
//! vaider-server --test no_panic`; a failure prints the smallest input that fails.

mod common;

use std::time::Duration;

use common::{TestServer, TOKEN};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::{json, Map, Value};
use vaider_core::history::Status;

/// The cases to run and the seed: `PROPTEST_CASES` and `PROPTEST_RNG_SEED` when set, else
/// `cases` and a fixed seed.
fn config(cases: u32) -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(9);
    }
    config.failure_persistence = None;
    // Each case is a real request: shrinking a failure stays within a minute.
    config.max_shrink_iters = 200;
    config
}

/// A server of its own, on a runtime that keeps serving between the cases' `block_on`s.
fn start() -> (tokio::runtime::Runtime, TestServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestServer::start());
    (runtime, server)
}

/// Pieces that have broken text handling before: escapes whole and cut short, multibyte
/// characters, separators, NUL.
fn pieces() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "%", "%a", "%C3", "%A9", "%2F", "%00", "%%", "é", "✓", "🎬", "/", "\\", "..", "~", " ",
            "\0", ",", ";", "=", "data:", "file://",
        ])
        .prop_map(String::from),
        "[a-zA-Z0-9._-]{1,8}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

fn finite(f: f64) -> Option<Value> {
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// Any JSON value, nested a little.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON numbers are finite", finite),
        any::<String>().prop_map(Value::from),
        pieces().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Numbers at the edges (negative, zero, tiny, past u64 and Instant), numbers as text, anything.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            json!(0),
            json!(-1),
            json!(-0.0),
            json!(1e-300),
            json!(0.001),
            json!(2),
            json!(3600),
            json!(3601),
            json!(4e9),
            json!(9.3e18),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e308),
            json!("NaN"),
            json!("Infinity"),
            json!("30"),
        ]),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON numbers are finite", finite),
        json_value(),
    ]
}

/// A source as a client might send it: real media (by absolute and relative path), generated
/// paths and URLs, anything. Never an http(s) URL off this machine.
fn source(server: &TestServer) -> impl Strategy<Value = String> {
    let media: Vec<String> = [
        "login-flow.webm",
        "login-flow.mp4",
        "login.png",
        "dashboard.png",
    ]
    .iter()
    .flat_map(|name| {
        [
            server.media_path(name).display().to_string(),
            name.to_string(),
            format!("file://{}", server.media_path(name).display()),
        ]
    })
    .collect();
    prop_oneof![
        // Often a real file, so the other arguments' odd values reach the model.
        8 => prop::sample::select(media),
        1 => pieces(),
        1 => any::<String>(),
        1 => pieces().prop_map(|p| format!("file://{p}")),
        1 => pieces().prop_map(|p| format!("~/{p}")),
        1 => pieces().prop_map(|p| format!("data:image/png;base64,{p}")),
        1 => Just("data:image/png;base64,iVBORw0KGgo=".to_string()),
        1 => pieces().prop_map(|p| format!("http://127.0.0.1:1/{p}")),
    ]
    .prop_filter("no URL off this machine", |s| {
        let lower = s.trim().to_ascii_lowercase();
        !(lower.starts_with("http://") || lower.starts_with("https://"))
            || lower.starts_with("http://127.0.0.1:1/")
    })
}

fn text() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::from),
        pieces().prop_map(Value::from),
        json_value(),
    ]
}

/// Each field of a body or an argument object, present or not, of the right type or not.
type Field = (&'static str, f64, BoxedStrategy<Value>);

/// An object with each field present at its probability, plus maybe one more of any name.
fn object(fields: Vec<Field>) -> impl Strategy<Value = Value> {
    let fields: Vec<_> = fields
        .into_iter()
        .map(|(name, present, value)| {
            prop::option::weighted(present, value).prop_map(move |v| (name, v))
        })
        .collect();
    (fields, prop::option::of((any::<String>(), json_value()))).prop_map(|(fields, extra)| {
        let mut object = Map::new();
        if let Some((name, value)) = extra {
            object.insert(name, value);
        }
        for (name, value) in fields {
            if let Some(value) = value {
                object.insert(name.to_string(), value);
            }
        }
        Value::Object(object)
    })
}

/// Numbers of the right type at the edges: negative, zero, tiny, past the limit, past u64 and
/// what `Instant` can hold.
fn edge_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            json!(0),
            json!(-1),
            json!(-0.0),
            json!(1e-300),
            json!(0.001),
            json!(2),
            json!(30),
            json!(3600),
            json!(3601),
            json!(4e9),
            json!(9.3e18),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e308),
        ]),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON numbers are finite", finite),
    ]
}

fn strings() -> impl Strategy<Value = Value> {
    prop::collection::vec(prop_oneof![any::<String>(), pieces()], 0..3).prop_map(Value::from)
}

fn rest_body(server: &TestServer) -> impl Strategy<Value = Vec<u8>> {
    let folder = server.media.path().display().to_string();
    let string = |s: BoxedStrategy<String>| s.prop_map(Value::from).boxed();
    let model = prop_oneof![
        3 => Just("gemini-3.5-flash-lite".to_string()),
        1 => pieces(),
        1 => any::<String>()
    ];
    // Every field of the right type, so the odd values reach the pipeline and the model.
    let well_typed = object(vec![
        ("videoPath", 0.99, string(source(server).boxed())),
        ("timeoutSec", 0.4, edge_number().boxed()),
        ("prompt", 0.4, string(pieces().boxed())),
        ("expectations", 0.4, strings().boxed()),
        ("model", 0.4, string(model.boxed())),
        ("noCache", 0.5, any::<bool>().prop_map(Value::from).boxed()),
        ("cwd", 0.5, string(Just(folder).boxed())),
    ])
    .boxed();
    // Any field of any type.
    let anything = object(vec![
        ("videoPath", 0.7, json_value().boxed()),
        ("timeoutSec", 0.5, number().boxed()),
        ("prompt", 0.5, text().boxed()),
        ("expectations", 0.5, json_value().boxed()),
        ("model", 0.5, text().boxed()),
        ("noCache", 0.5, json_value().boxed()),
        ("cwd", 0.5, text().boxed()),
    ]);
    prop_oneof![
        4 => well_typed.clone().prop_map(|v| v.to_string().into_bytes()),
        1 => anything.prop_map(|v| v.to_string().into_bytes()),
        // Cut short somewhere: the JSON breaks off, maybe inside a character.
        1 => (well_typed, any::<prop::sample::Index>()).prop_map(|(v, at)| {
            let bytes = v.to_string().into_bytes();
            let end = at.index(bytes.len() + 1);
            bytes[..end].to_vec()
        }),
        1 => json_value().prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ]
}

/// Whether a JSON answer is the panic net's rather than a real one.
fn is_caught_panic(message: &str) -> bool {
    message.contains(vaider_server::panics::ANSWER)
}

/// No call may be left `running` once every client has its answer.
fn assert_every_row_has_an_outcome(server: &TestServer) {
    let rows = server.engine.history().list(1_000_000, 0).unwrap();
    let running: Vec<_> = rows
        .iter()
        .filter(|r| r.status == Status::Running)
        .map(|r| (&r.id, &r.source))
        .collect();
    assert!(running.is_empty(), "rows left running: {running:?}");
}

#[test]
fn every_rest_body_is_answered_in_the_contract_shape() {
    let (runtime, server) = start();
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let url = format!("{}/v1/analyse", server.url);
    let answers = std::cell::RefCell::new(std::collections::BTreeMap::<u16, u32>::new());
    let mut runner = TestRunner::new(config(512));
    runner
        .run(&rest_body(&server), |body| {
            let (status, answer) = runtime.block_on(async {
                let response = http
                    .post(&url)
                    .bearer_auth(TOKEN)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .map_err(|e| TestCaseError::fail(format!("no answer: {e}")))?;
                let status = response.status().as_u16();
                let bytes = response
                    .bytes()
                    .await
                    .map_err(|e| TestCaseError::fail(format!("answer cut off: {e}")))?;
                let answer: Value = serde_json::from_slice(&bytes).map_err(|_| {
                    TestCaseError::fail(format!(
                        "{status} answer is not JSON: {}",
                        String::from_utf8_lossy(&bytes)
                    ))
                })?;
                Ok::<_, TestCaseError>((status, answer))
            })?;
            *answers.borrow_mut().entry(status).or_insert(0) += 1;
            match status {
                200 => prop_assert!(answer["description"].is_string(), "{answer}"),
                400..=599 => {
                    let (code, message) = (&answer["error"]["code"], &answer["error"]["message"]);
                    prop_assert!(code.is_string() && message.is_string(), "{status} {answer}");
                    prop_assert!(
                        !is_caught_panic(message.as_str().unwrap_or_default()),
                        "the request panicked (see the server log above)"
                    );
                }
                _ => prop_assert!(false, "unexpected status {status}: {answer}"),
            }
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
    let answers = answers.into_inner();
    eprintln!("answers by status: {answers:?}");
    // The bodies reach every stage, the model's answer included, not only the parser.
    assert!(answers.get(&200).is_some_and(|n| *n >= 3), "{answers:?}");
    assert_every_row_has_an_outcome(&server);
}

const TOOLS: &[&str] = &[
    "analyze_video",
    "analyze_image",
    "ui_to_artifact",
    "extract_text_from_screenshot",
    "diagnose_error_screenshot",
    "understand_technical_diagram",
    "analyze_data_visualization",
    "ui_diff_check",
    "vaider_status",
];

/// Providers that would be reached over the internet (with a key from the environment or the
/// keychain), or on a local port no test serves; the tests ask none of them.
const NOT_ASKED: &[&str] = &[
    "openai",
    "zai",
    "anthropic",
    "ollama",
    "lmstudio",
    "vllm",
    "bedrock",
];

fn tool_arguments(server: &TestServer) -> impl Strategy<Value = Value> {
    let folder = server.media.path().display().to_string();
    let not_asked = |p: &str| NOT_ASKED.contains(&p.trim().to_ascii_lowercase().as_str());
    let provider = prop_oneof![
        prop::sample::select(vec!["", "gemini", " Gemini ", "nonesuch"]).prop_map(String::from),
        pieces().prop_filter("not a provider off this machine", move |p| !not_asked(p)),
    ];
    let model = prop_oneof![
        3 => Just("gemini-3.5-flash-lite".to_string()),
        1 => pieces(),
        1 => any::<String>()
    ];
    let string = |s: BoxedStrategy<String>| s.prop_map(Value::from).boxed();
    let a_source = || string(source(server).boxed());
    let a_text = || string(prop_oneof![pieces(), any::<String>()].boxed());
    // Every argument of the right type (the tools' sources under all their names), so the odd
    // values reach the pipeline and the model.
    let well_typed = object(vec![
        ("video_source", 0.5, a_source()),
        ("videoSource", 0.2, a_source()),
        ("image_source", 0.5, a_source()),
        ("imageSource", 0.2, a_source()),
        ("expected_image_source", 0.3, a_source()),
        ("actual_image_source", 0.3, a_source()),
        ("prompt", 0.4, a_text()),
        ("output_type", 0.2, a_text()),
        ("programming_language", 0.2, a_text()),
        ("context", 0.2, a_text()),
        ("diagram_type", 0.2, a_text()),
        ("analysis_focus", 0.2, a_text()),
        ("expectations", 0.3, strings().boxed()),
        ("provider", 0.3, string(provider.boxed())),
        ("model", 0.3, string(model.boxed())),
        ("timeout_sec", 0.4, edge_number().boxed()),
        ("no_cache", 0.5, any::<bool>().prop_map(Value::from).boxed()),
        ("cwd", 0.4, string(Just(folder).boxed())),
    ]);
    // Any argument of any type (never a provider name off this machine).
    let anything = object(
        [
            "video_source",
            "image_source",
            "expected_image_source",
            "actual_image_source",
            "prompt",
            "output_type",
            "expectations",
            "model",
            "timeout_sec",
            "no_cache",
            "cwd",
        ]
        .into_iter()
        .map(|name| (name, 0.4, json_value().boxed()))
        .collect(),
    )
    .prop_filter("not a provider off this machine", move |args| {
        !args["provider"].as_str().is_some_and(not_asked)
    });
    prop_oneof![3 => well_typed, 1 => anything]
}

#[test]
fn every_mcp_tool_call_is_answered() {
    let (runtime, server) = start();
    let client = runtime.block_on(server.mcp());
    let tool = prop_oneof![
        8 => prop::sample::select(TOOLS).prop_map(String::from),
        1 => pieces(),
    ];
    let answers = std::cell::RefCell::new(std::collections::BTreeMap::<&str, u32>::new());
    let mut runner = TestRunner::new(config(384));
    runner
        .run(&(tool, tool_arguments(&server)), |(tool, arguments)| {
            let Value::Object(arguments) = arguments else {
                unreachable!("tool_arguments makes objects")
            };
            let call = client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments));
            let answer = runtime
                .block_on(async { tokio::time::timeout(Duration::from_secs(60), call).await })
                .map_err(|_| TestCaseError::fail("no answer within 60 s"))?;
            let kind = match &answer {
                Ok(result) if result.is_error == Some(true) => "tool error",
                Ok(_) => "tool result",
                Err(ServiceError::McpError(_)) => "JSON-RPC error",
                Err(_) => "no answer",
            };
            *answers.borrow_mut().entry(kind).or_insert(0) += 1;
            match answer {
                Ok(result) => {
                    let text = common::text_of(&result);
                    prop_assert!(
                        !is_caught_panic(&text),
                        "the tool call panicked (see the server log above)"
                    );
                }
                // Arguments that do not fit the tool's schema are refused as invalid params.
                Err(ServiceError::McpError(error)) => {
                    prop_assert!(
                        !is_caught_panic(&error.message),
                        "the request panicked (see the server log above)"
                    );
                }
                Err(other) => prop_assert!(false, "the call was not answered: {other}"),
            }
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
    let answers = answers.into_inner();
    eprintln!("answers: {answers:?}");
    assert!(
        answers.get("tool result").is_some_and(|n| *n >= 3),
        "{answers:?}"
    );
    // Still connected and served after every case.
    let status = runtime.block_on(common::call(&client, "vaider_status", json!({})));
    assert_ne!(status.is_error, Some(true));
    assert_every_row_has_an_outcome(&server);
}

/// Found by the property test above: a timeout past what `Instant` can hold panicked the
/// pipeline (`started + timeout`) and the client got no answer.
#[tokio::test]
async fn a_timeout_past_what_the_clock_holds_is_refused_with_422() {
    let server = TestServer::start().await;
    let video = server.media_path("login-flow.webm");
    for timeout in [json!(9.3e18), json!(u64::MAX), json!(1e300), json!(-1)] {
        let (status, body) = server
            .post_analyse(json!({"videoPath": video, "timeoutSec": timeout}))
            .await;
        assert_eq!(status, 422, "{timeout}: {body}");
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
        let message = body["error"]["message"].as_str().unwrap().to_lowercase();
        assert!(message.contains("timeout"), "{body}");
    }
    let client = server.mcp().await;
    let answer = common::call(
        &client,
        "analyze_video",
        json!({"video_source": video, "timeout_sec": u64::MAX}),
    )
    .await;
    assert_eq!(answer.is_error, Some(true));
    assert!(
        common::text_of(&answer).starts_with("INVALID_REQUEST"),
        "{}",
        common::text_of(&answer)
    );
}
