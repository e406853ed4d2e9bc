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
