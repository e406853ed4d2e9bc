//! The five QA tools over MCP (rmcp's client, real HTTP), as contracts.md §3 has them: a plan
//! written from requirements against a small app served by the test (real headless Chromium,
//! the fake Gemini as the model), run, listed with filters, read whole; the error codes; and
//! plans and runs still there after a restart.

mod common;

use common::{call, TestClient, TestServer};
use serde_json::{json, Value};

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

/// Calls a tool; its structured result and whether it is an error.
async fn tool(client: &common::McpClient, name: &str, arguments: Value) -> (Value, bool) {
    let result = call(client, name, arguments).await;
    (structured(&result), result.is_error == Some(true))
}

#[tokio::test]
async fn the_five_tools_write_run_list_and_read_plans_and_survive_a_restart() {
    let app = vaider_test_support::shop::serve_app().await;
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    std::fs::write(root.join("README.md"), "# Shop\n").unwrap();
    let server = TestServer::start().await;
    // The workspace comes from the client's roots, as an editor sends them.
    let client = server
        .mcp_with(TestClient {
            roots: vec![root.clone()],
            ..Default::default()
        })
        .await;

    let tools = client.list_all_tools().await.unwrap();
    for name in [
        "generate_test_plan",
        "run_test_plan",
        "list_test_plans",
        "list_test_runs",
        "get_test_run",
    ] {
        assert!(tools.iter().any(|t| t.name == name), "{name} is listed");
    }
    let (plan, error) = tool(
        &client,
        "generate_test_plan",
        json!({
            "requirements": "The first page shows \"Sign in\" and \"Email\"",
            "baseUrl": app, "name": "Login page"
        }),
    )
    .await;
    assert!(!error, "{plan}");
    assert_eq!(plan["name"], "Login page");
    assert_eq!(plan["steps"], 3);
    let plan_id = plan["planId"].as_str().unwrap().to_string();
    assert!(plan["path"]
        .as_str()
        .unwrap()
        .starts_with(root.join(".qa-agent/plans").to_str().unwrap()));

    let (run, error) = tool(&client, "run_test_plan", json!({"planId": plan_id})).await;
    assert!(!error, "{run}");
    assert_eq!(run["status"], "passed");
    assert_eq!(
        (run["stepsExecuted"].as_u64(), run["stepsPassed"].as_u64()),
        (Some(3), Some(3))
    );
    assert!(run["duration"].as_u64().unwrap() > 0);
    assert!(run.get("failedStep").is_none());
    let run_id = run["runId"].as_str().unwrap().to_string();

    // The plan was written at a high thinking level; the run's model calls (a page judged,
    // browsing steps) each at its own job's, and none with a lowered temperature.
    let mut checked = 0;
    for body in server.fake.generate_requests() {
        let system = body["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap_or("");
        let level = &body["generationConfig"]["thinkingConfig"]["thinkingLevel"];
        let want =
            if system.contains("writing a test plan") || system.contains("judging a web page") {
                "high"
            } else if system.contains("using a web app in a browser") {
                "low"
            } else {
                continue;
            };
        assert_eq!(level, want, "{system}");
        checked += 1;
    }
    assert!(checked >= 1, "the plan's own call is among them");
    assert_eq!(server.fake.guidance_notes(), Vec::<String>::new());

    let (whole, _) = tool(&client, "get_test_run", json!({"runId": run_id})).await;
    assert_eq!(whole["planId"], plan_id);
    assert_eq!(whole["stepResults"].as_array().unwrap().len(), 3);
    let shot = whole["stepResults"][1]["screenshot"].as_str().unwrap();
    assert!(std::path::Path::new(shot).is_file());

    // The errors are the contract's, in structuredContent of an error result.
    let (missing, error) = tool(&client, "run_test_plan", json!({"planId": "no-such-plan"})).await;
    assert!(error);
    assert_eq!(missing["error"]["code"], "PLAN_NOT_FOUND");
    let (missing, _) = tool(&client, "get_test_run", json!({"runId": "no-such-run"})).await;
    assert_eq!(missing["error"]["code"], "RUN_NOT_FOUND");
    // A required argument left out is the contract's INVALID_INPUT too, not a protocol error.
    let (bad, error) = tool(&client, "run_test_plan", json!({})).await;
    assert!(error);
    assert_eq!(bad["error"]["code"], "INVALID_INPUT");
    let (bad, _) = tool(&client, "generate_test_plan", json!({"baseUrl": app})).await;
    assert_eq!(bad["error"]["code"], "INVALID_INPUT");
    assert!(bad["error"]["message"]
        .as_str()
        .unwrap()
        .contains("requirements"));
    let listed = tools
        .iter()
        .find(|t| t.name == "generate_test_plan")
        .unwrap();
    let required = listed.input_schema["required"].as_array().unwrap();
    assert!(required.contains(&json!("requirements")) && required.contains(&json!("baseUrl")));
    let (bad, _) = tool(&client, "list_test_runs", json!({"status": "green"})).await;
    assert_eq!(bad["error"]["code"], "INVALID_INPUT");
    let (bad, _) = tool(
        &client,
        "generate_test_plan",
        json!({"requirements": "x", "baseUrl": "localhost"}),
    )
    .await;
    assert_eq!(bad["error"]["code"], "INVALID_INPUT");
    assert_eq!(bad["error"]["details"]["field"], "baseUrl");
    client.cancel().await.unwrap();
    drop(server);

    // A new server (a restart) lists what the first one kept, with the filters.
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let cwd = root.display().to_string();
    let (plans, _) = tool(&client, "list_test_plans", json!({"cwd": cwd})).await;
    assert_eq!(plans["plans"].as_array().unwrap().len(), 1);
    let listed = &plans["plans"][0];
    assert_eq!(
        (listed["id"].as_str(), listed["stepCount"].as_u64()),
        (Some(plan_id.as_str()), Some(3))
    );
    assert!(listed["project"].as_str().is_some() && listed["createdAt"].as_str().is_some());
    let (none, _) = tool(
        &client,
        "list_test_plans",
        json!({"cwd": cwd, "project": "elsewhere"}),
    )
    .await;
    assert_eq!(none["plans"], json!([]));
    let (runs, _) = tool(
        &client,
        "list_test_runs",
        json!({"cwd": cwd, "planId": plan_id, "status": "passed"}),
    )
    .await;
    assert_eq!(runs["runs"][0]["id"], run_id);
    assert_eq!(runs["runs"][0]["planName"], "Login page");
    let (failed, _) = tool(
        &client,
        "list_test_runs",
        json!({"cwd": cwd, "status": "failed"}),
    )
    .await;
    assert_eq!(failed["runs"], json!([]));
    // Without roots or cwd there is no workspace, and the error says what to pass.
    let (nowhere, _) = tool(&client, "list_test_plans", json!({})).await;
    assert_eq!(nowhere["error"]["code"], "INVALID_INPUT");
    assert!(nowhere["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cwd"));
    client.cancel().await.unwrap();
}

/// GET on the UI API with the token.
async fn ui_get(server: &TestServer, path: &str) -> Value {
    let response = server
        .http()
        .get(format!("{}{path}", server.url))
        .bearer_auth(common::TOKEN)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_plan_that_finds_a_bug_is_a_failed_result_not_an_error_and_runs_again() {
    let app = vaider_test_support::shop::serve_app().await;
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    // A plan whose check does not hold on this app: it did its job by failing.
    let plan = json!({"id": "greeting", "name": "Greeting", "project": {"name": "shop"},
    "baseUrl": app, "createdAt": "2026-11-22T10:00:00.000Z", "updatedAt": "2026-11-22T10:00:00.000Z",
    "steps": [
        {"id": "open", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]},
        {"id": "hello", "name": "says hello", "type": "selenese",
         "commands": [{"command": "assertText", "target": "h1", "value": "Hello"}]}
    ]});
    let folder = root.join(".qa-agent/plans/shop");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("greeting.json"), plan.to_string()).unwrap();
    let server = TestServer::start().await;
    // Vaider did not write it: the user approves it when the client asks.
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let client = server
        .mcp_with(TestClient {
            roots: vec![root.clone()],
            approve: Some(true),
            asked: asked.clone(),
            ..Default::default()
        })
        .await;

    let result = call(&client, "run_test_plan", json!({"planId": "greeting"})).await;
    let questions = asked.lock().unwrap().clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains(&format!("opens {app}")),
        "{}",
        questions[0]
    );
    assert_ne!(result.is_error, Some(true), "{}", common::text_of(&result));
    let run = structured(&result);
    assert_eq!(
        (run["status"].as_str(), run["failedStep"].as_str()),
        (Some("failed"), Some("hello"))
    );
    let text = common::text_of(&result);
    assert!(text.contains("Step 2 \"says hello\" failed"), "{text}");
    let run_id = run["runId"].as_str().unwrap().to_string();

    // In the history it is `failed` with the failing step named, not `error JOB_FAILED`.
    let detail = ui_get(&server, &format!("/api/interactions/{run_id}")).await;
    assert_eq!(detail["status"], "failed", "{detail}");
    assert_eq!(detail["errorCode"], "TEST_FAILED");
    // Typed as its capability names it: a plan's run, run again with the same inputs, its
    // steps in the stored run and its lists always there.
    assert_eq!(
        (&detail["kind"], &detail["runAgain"]),
        (&json!("test_plan_run"), &json!("same_inputs")),
        "{detail}"
    );
    let job = &detail["job"];
    assert_eq!(job["result"]["testRun"]["planId"], "greeting", "{job}");
    assert_eq!(
        job["result"]["testRun"]["stepResults"][1]["status"],
        "failed"
    );
    assert!(
        job["calls"].is_array() && job["traces"] == json!([]),
        "{job}"
    );
    let shots = job["screenshotUrls"].as_array().unwrap();
    assert!(
        shots
            .iter()
            .all(|u| u.as_str().unwrap().starts_with(&format!(
                "/api/interactions/{run_id}/media?which=screenshot&n="
            )) && u.as_str().unwrap().contains("&sig=")),
        "{job}"
    );
    assert!(detail.get("verdicts").is_none() && detail.get("comparison").is_none());
    let named = detail["errorMessage"].as_str().unwrap_or_default();
    assert!(named.starts_with("Step 2 \"says hello\" failed"), "{named}");
    let listed = ui_get(&server, "/api/history?status=failed").await;
    let ids: Vec<&str> = listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|row| row["id"].as_str())
        .collect();
    assert!(ids.contains(&run_id.as_str()), "{listed}");

    // "Run again" runs the plan again through the service: a new run, failed the same way.
    let response = server
        .http()
        .post(format!(
            "{}/api/interactions/{run_id}/run-again",
            server.url
        ))
        .bearer_auth(common::TOKEN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    let again: Value = response.json().await.unwrap();
    let again_id = again["id"].as_str().unwrap().to_string();
    assert_ne!(again_id, run_id);
    let mut last = Value::Null;
    for _ in 0..600 {
        last = ui_get(&server, &format!("/api/interactions/{again_id}")).await;
        if last["status"] != "running" && !last["status"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        (last["status"].as_str(), last["tool"].as_str()),
        (Some("failed"), Some("run_test_plan")),
        "{last}"
    );
    assert!(root
        .join(format!(".qa-agent/runs/{again_id}.json"))
        .is_file());
    client.cancel().await.unwrap();
}
