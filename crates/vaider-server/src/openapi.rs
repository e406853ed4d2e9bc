//! The OpenAPI 3.1 document of the REST API, served at `/v1/openapi.json` so clients and
//! tools (schemathesis, code generators) can read the contract. One function per path and
//! one per shared schema: a single `json!` for the whole document is too deep to read.

use serde_json::{json, Value};

pub fn document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Vaider REST API",
            "version": vaider_core::VERSION,
            "description": "Send a GUI-test video to a vision model and get a step-by-step description. Every route but /v1/health and /v1/openapi.json needs `Authorization: Bearer <token>` (`vaider token` prints it)."
        },
        "servers": [{"url": "http://127.0.0.1:3456"}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "AnalyseRequest": analyse_request(),
                "ValidateRequest": validate_request(),
                "AgentResult": agent_result(),
                "AnalyseResponse": analyse_response()
            }
        },
        "paths": {
            "/v1/analyse": analyse_route(),
            "/v1/validate": validate_route(),
            "/v1/compare": compare_route(),
            "/v1/health": health_route(),
            "/v1/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}}
        }
    })
}

/// An error answer. `extra` holds the spec's siblings of `error` (a 408's durationMs, a 500's
/// upstreamResponse), which are also present inside it; `always` names those every answer of
/// that status carries.
fn error(description: &str, extra: Value, always: &[&str]) -> Value {
    let mut inner = json!({
        "code": {"type": "string"},
        "message": {"type": "string"},
        "interactionId": {"type": "string"}
    });
    let mut outer = json!({});
    let mut required = vec![json!("error")];
    if let Some(extra) = extra.as_object() {
        for (name, schema) in extra {
            inner[name] = schema.clone();
            outer[name] = schema.clone();
        }
    }
    required.extend(always.iter().map(|name| json!(name)));
    outer["error"] =
        json!({"type": "object", "required": ["code", "message"], "properties": inner});
    json!({
        "description": description,
        "content": {"application/json": {"schema": {
            "type": "object",
            "required": required,
            "properties": outer
        }}}
    })
}

/// `POST /v1/analyse`: a video described step by step.
fn analyse_route() -> Value {
    json!({"post": {
        "summary": "Describe a video step by step",
        "security": [{"bearer": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AnalyseRequest"}}}},
        "responses": {
            "200": {"description": "The description", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AnalyseResponse"}}}},
            "400": error("INVALID_PATH: the path does not lead to a readable video or image", json!({}), &[]),
            "401": error("UNAUTHORIZED: missing or wrong token", json!({}), &[]),
            "403": error("FORBIDDEN_ORIGIN / FORBIDDEN_HOST: not a local client", json!({}), &[]),
            "404": error("MODEL_NOT_FOUND: the provider does not serve the model (shut down, or a wrong name); error.choices lists the current ones", json!({}), &[]),
            "408": error("TIMEOUT: the analysis took longer than timeoutSec; durationMs is how long it ran", json!({"durationMs": {"type": "integer", "minimum": 0}}), &["durationMs"]),
            "422": error("INVALID_REQUEST: the body is malformed", json!({}), &[]),
            "500": error("UPSTREAM_ERROR: the model service failed; upstreamResponse is its answer, when it gave one (INTERNAL: Vaider itself failed)", json!({"upstreamResponse": {"type": "object", "required": ["status", "body"], "properties": {"status": {"type": "integer"}, "body": {"type": "string"}}}}), &[]),
            "429": error("RATE_LIMITED: the provider's per-minute quota refused the call after Vaider waited and retried as it asked (the message has the wait); QUOTA_EXHAUSTED: its daily quota is used up, reported at once", json!({"upstreamResponse": {"type": "object", "required": ["status", "body"], "properties": {"status": {"type": "integer"}, "body": {"type": "string"}}}}), &[]),
            "503": error("NO_API_KEY: no API key is configured; PAUSED: a person paused Vaider from its tray menu or history window", json!({}), &[])
        }
    }})
}

fn analyse_request() -> Value {
    json!({
        "type": "object",
        "required": ["videoPath"],
        "properties": {
            "videoPath": {"type": "string", "description": "Absolute path (or relative to cwd) or http(s) URL of the video."},
            "timeoutSec": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600, "default": 30},
            "prompt": {"type": "string"},
            "expectations": {"type": "array", "items": {"type": "string"}},
            "model": {"type": "string"},
            "noCache": {"type": "boolean", "default": false},
            "cwd": {"type": "string", "description": "Folder a relative videoPath is relative to."}
        }
    })
}

fn analyse_response() -> Value {
    json!({
        "type": "object",
        "required": ["description", "framesAnalysed", "model", "durationMs"],
        "properties": {
            "description": {"type": "string"},
            "framesAnalysed": {"type": "integer", "minimum": 0},
            "model": {"type": "string"},
            "durationMs": {"type": "integer", "minimum": 0},
            "provider": {"type": "string"},
            "expectations": {"type": "array", "items": {"type": "object", "properties": {
                "expectation": {"type": "string"},
                "verdict": {"type": "string", "enum": ["met", "not_met", "unclear"]},
                "evidence": {"type": "string"}}}},
            "allExpectationsMet": {"type": "boolean"},
            "usage": {"type": "object", "properties": {"inputTokens": {"type": "integer"}, "outputTokens": {"type": "integer"}}},
            "costUsd": {"type": "number"},
            "cached": {"type": "boolean"},
            "interactionId": {"type": "string"},
            "logDir": {"type": "string"}
        }
    })
}

/// `POST /v1/validate`: a Playwright test run and judged.
fn validate_route() -> Value {
    json!({"post": {
        "summary": "Run a Playwright test and judge it (contracts.md §2's AgentResult)",
        "security": [{"bearer": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ValidateRequest"}}}},
        "responses": {
            "200": {"description": "The AgentResult; a failed rubric is success: false", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AgentResult"}}}},
            "401": error("UNAUTHORIZED: missing or wrong token", json!({}), &[]),
            "403": error("FORBIDDEN_ORIGIN / FORBIDDEN_HOST: not a local client", json!({}), &[]),
            "422": error("INVALID_REQUEST: the body is malformed", json!({}), &[])
        }
    }})
}

fn validate_request() -> Value {
    json!({
        "type": "object",
        "required": ["test_path"],
        "properties": {
            "test_path": {"type": "string", "description": "The Playwright spec: absolute, or relative to cwd."},
            "project_dir": {"type": "string", "description": "The folder of playwright.config.*; default: the nearest one above the test."},
            "grep": {"type": "string", "description": "Only tests whose title matches (Playwright's --grep)."},
            "expectations": {"type": "array", "items": {"type": "string"}, "description": "What the recording must show; the video is watched and each one not shown fails the rubric."},
            "max_test_duration_ms": {"type": "integer", "minimum": 0, "default": 45000},
            "min_screenshots": {"type": "integer", "minimum": 0, "default": 1},
            "timeout_sec": {"type": "integer", "minimum": 0, "default": 120, "description": "The run's time limit; it is killed then."},
            "provider": {"type": "string"},
            "model": {"type": "string"},
            "cwd": {"type": "string", "description": "Folder relative paths are relative to."}
        }
    })
}

/// contracts.md §2's `AgentResult`.
fn agent_result() -> Value {
    json!({
        "type": "object",
        "required": ["success", "data", "error", "execution_time_ms", "cost_usd", "metadata"],
        "properties": {
            "success": {"type": "boolean", "description": "The rubric passed."},
            "data": {"type": "object", "description": "{} when the test file does not exist or the run could not start", "properties": {
                "validation_result": {"type": "object", "properties": {
                    "browser_launched": {"type": "boolean"},
                    "test_executed": {"type": "boolean"},
                    "test_passed": {"type": "boolean"},
                    "screenshots": {"type": "array", "items": {"type": "string"}},
                    "console_errors": {"type": "array", "items": {"type": "string", "maxLength": 200}},
                    "network_failures": {"type": "array", "items": {"type": "string", "maxLength": 200}},
                    "execution_time_ms": {"type": "integer", "minimum": 0}}},
                "rubric_validation": {"type": "object", "properties": {
                    "passed": {"type": "boolean"},
                    "errors": {"type": "array", "items": {"type": "string"}},
                    "warnings": {"type": "array", "items": {"type": "string"}}}},
                "test_path": {"type": "string"},
                "screenshots": {"type": "array", "items": {"type": "string"}},
                "artifacts_dir": {"type": "string"},
                "report": {"type": "array", "items": {"type": "object"}, "description": "Per test: title, status, duration_ms, error {message, location}, retries, attachments."},
                "video_analysis": {"type": "object", "description": "When expectations were given: the description (naming the test's steps with their times) and each expectation's verdict."},
                "failure_analysis": {"type": "array", "description": "For the first failed tests: the failing step watched closely (docs/validation.md).", "items": {"type": "object", "required": ["test", "watched", "screen_at_failure", "expected", "cause", "video", "interaction_id", "model", "cost_usd", "cached"], "properties": {
                    "test": {"type": "string"},
                    "failing_step": {"type": "string", "description": "As step 3 'add the chair', 00:04.2 (the time on the recording's clock)."},
                    "watched": {"type": "object", "description": "The stretch of the recording watched: from and to in seconds, at fps frames a second.", "properties": {"from": {"type": "number"}, "to": {"type": "number"}, "fps": {"type": "number"}}},
                    "screen_at_failure": {"type": "string"},
                    "expected": {"type": "string"},
                    "first_wrong": {"type": "string", "description": "The step running when the screen first went wrong, with that moment's time."},
                    "first_wrong_at": {"type": "number", "description": "Seconds into the recording."},
                    "cause": {"type": "string"},
                    "video": {"type": "string", "description": "The recording watched: the test's video, or its trace's screencast made into one."},
                    "interaction_id": {"type": "string"}, "model": {"type": "string"}, "cost_usd": {"type": "number"}, "cached": {"type": "boolean"}
                }}},
                "snapshot_changes": {"type": "array", "description": "The run's failed toHaveScreenshot snapshots, pending a person's review (docs/review.md).", "items": {"type": "object", "required": ["id", "name", "snapshot", "status", "changed_pixels"], "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "snapshot": {"type": "string", "description": "The snapshot file an approval writes."},
                    "status": {"type": "string", "enum": ["changed", "new"]},
                    "changed_pixels": {"type": "integer", "minimum": 0},
                    "summary": {"type": "string", "description": "The model's verdict in a line, or why there is none."}}}}
            }},
            "error": {"type": ["string", "null"], "description": "The rubric's errors joined with \"; \"."},
            "execution_time_ms": {"type": "integer", "minimum": 0},
            "cost_usd": {"type": "number", "minimum": 0},
            "metadata": {"type": "object"}
        }
    })
}

/// `POST /v1/compare`: the MCP tool `visual_compare` over HTTP.
fn compare_route() -> Value {
    json!({"post": {
        "summary": "Compare two screenshots (the MCP tool visual_compare): pixelmatch's count, the changed regions, the model's explanation when pixels changed",
        "security": [{"bearer": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": compare_request()}}},
        "responses": {
            "200": {"description": "{success: true, data: visual_compare's data} or {success: false, error: what to do}", "content": {"application/json": {"schema": {"type": "object", "required": ["success"], "properties": {"success": {"type": "boolean"}, "data": compare_data(), "error": {"type": "string"}}}}}},
            "401": error("UNAUTHORIZED: missing or wrong token", json!({}), &[]),
            "403": error("FORBIDDEN_ORIGIN / FORBIDDEN_HOST: not a local client", json!({}), &[]),
            "422": error("INVALID_REQUEST: the body is malformed, or an option is out of its range (the message says which)", json!({}), &[])
        }
    }})
}

fn compare_request() -> Value {
    json!({
        "type": "object",
        "required": ["before", "after", "cwd"],
        "properties": {
            "before": {"type": "string", "description": "The screenshot before the change (absolute, or relative to cwd)."},
            "after": {"type": "string"},
            "cwd": {"type": "string", "description": "The project's absolute path; the pictures go to its .screenshots/comparisons."},
            "expected_changes": {"type": "array", "items": {"type": "string"}},
            "threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1, "description": "pixelmatch's and odiff's threshold."},
            "include_anti_aliasing": {"type": "boolean", "default": false, "description": "pixelmatch's includeAA."},
            "alpha": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1, "description": "pixelmatch's alpha."},
            "diff_color": {"type": "string", "default": "#ff0000", "description": "pixelmatch's diffColor, odiff's --diff-color."},
            "diff_color_alt": {"type": "string", "description": "pixelmatch's diffColorAlt."},
            "aa_color": {"type": "string", "default": "#ffff00", "description": "pixelmatch's aaColor."},
            "ignore_regions": {"type": "array", "items": {"type": "object", "required": ["x", "y", "width", "height"], "properties": {"x": {"type": "integer", "minimum": 0}, "y": {"type": "integer", "minimum": 0}, "width": {"type": "integer", "minimum": 1}, "height": {"type": "integer", "minimum": 1}}}, "description": "odiff's ignore regions."},
            "min_region_pixels": {"type": "integer", "minimum": 1, "maximum": 1000000, "default": 3},
            "blur": {"type": "number", "minimum": 0, "maximum": 3, "default": 0},
            "provider": {"type": "string"},
            "model": {"type": "string"}
        }
    })
}

/// `visual_compare`'s `data` (contracts.md §1), with the fields Vaider adds.
fn compare_data() -> Value {
    let texts = json!({"type": "array", "items": {"type": "string"}});
    let change = json!({"type": "object", "required": ["region", "change"], "properties": {
        "region": {"type": "string"},
        "change": {"type": "string"},
        "severity": {"type": "string", "enum": ["info", "warning", "error"]}}});
    json!({
        "type": "object",
        "required": ["annotated_screenshot", "pixel_diff", "agentic_analysis", "validation", "diff_image", "heat_map", "regions", "cost_usd"],
        "properties": {
            "annotated_screenshot": {"type": "string", "description": "The after-image with the changed regions boxed and numbered."},
            "pixel_diff": {"type": "object", "required": ["total_changes", "changed_pixels", "diff_percentage"], "properties": {
                "total_changes": {"type": "integer", "minimum": 0, "description": "Changed regions, noise dropped."},
                "changed_pixels": {"type": "integer", "minimum": 0},
                "diff_percentage": {"type": "number", "minimum": 0, "description": "Of all pixels, in percent."}}},
            "agentic_analysis": {"type": "object", "required": ["summary", "found_changes", "unexpected_changes"], "properties": {
                "summary": {"type": "string"},
                "found_changes": {"type": "array", "items": change},
                "unexpected_changes": {"type": "array", "items": change}}},
            "validation": {"type": "object", "required": ["expected_matched", "expected_missed", "unexpected_found", "regressions"], "properties": {
                "expected_matched": texts,
                "expected_missed": texts,
                "unexpected_found": texts,
                "regressions": {"type": "boolean"}}},
            "diff_image": {"type": ["string", "null"]},
            "heat_map": {"type": "string"},
            "close_ups": {"type": "string", "description": "Close-ups of the largest changed regions, as the model saw them."},
            "regions": {"type": "array", "items": {"type": "object", "properties": {
                "number": {"type": "integer"},
                "x": {"type": "integer"},
                "y": {"type": "integer"},
                "width": {"type": "integer"},
                "height": {"type": "integer"},
                "changed_pixels": {"type": "integer"}}}},
            "ignored_regions": ignored_regions(),
            "size_change": {"type": "string", "description": "Set when the two screenshots differ in size: a layout change, compared on the overlap."},
            "interaction_id": {"type": "string", "description": "The history entry of the model's explanation; absent when no pixels changed."},
            "cost_usd": {"type": "number", "minimum": 0}
        }
    })
}

/// The rectangles a comparison left out: absent when it ignored nothing.
fn ignored_regions() -> Value {
    json!({"type": "array", "description": "The rectangles left out of the diff: those given (ignore_regions) and those the screenshots' ignore selectors matched when they were captured (visual_capture's ignore_selectors).", "items": {
        "type": "object",
        "required": ["x", "y", "width", "height", "source"],
        "properties": {
            "x": {"type": "integer", "minimum": 0},
            "y": {"type": "integer", "minimum": 0},
            "width": {"type": "integer", "minimum": 1},
            "height": {"type": "integer", "minimum": 1},
            "source": {"type": "string", "enum": ["given", "selector"]},
            "selector": {"type": "string", "description": "The capture's selector, for \"selector\"."},
            "screenshot": {"type": "string", "enum": ["before", "after", "both"], "description": "Which capture the selector matched it in, for \"selector\"."}
        }
    }})
}

/// `GET /v1/health`: whether Vaider runs, needing no token.
fn health_route() -> Value {
    json!({"get": {
        "summary": "Is Vaider running?",
        "responses": {"200": {"description": "Running", "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["status", "timestamp", "version"],
            "properties": {"status": {"const": "ok"}, "timestamp": {"type": "string", "format": "date-time"}, "version": {"type": "string"}}
        }}}}}
    }})
}
