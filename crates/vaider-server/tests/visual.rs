//! The visual comparison tools over MCP (rmcp's client, real HTTP) with the fake Gemini: the
//! pixel diff decides whether the model is asked at all, the pictures and the result land in
//! the workspace's `.screenshots/`, the model's answer becomes the contract's analysis and
//! validation, and a store that cannot be written leaves nothing partial.

mod common;

use std::path::Path;

use common::{call, TestServer};
use serde_json::{json, Value};

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn identical_screenshots_make_no_model_call() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let shot = server.media_path("login.png");
    let result = call(
        &client,
        "visual_compare",
        json!({"before": shot, "after": shot, "cwd": server.media.path()}),
    )
    .await;
    let body = structured(&result);
    assert_eq!(body["success"], true, "{body}");
    let data = &body["data"];
    assert_eq!(data["pixel_diff"]["total_changes"], 0);
    assert_eq!(data["pixel_diff"]["changed_pixels"], 0);
    // With no model call nothing waits for the pictures: they follow the answer.
    vaider_visual::service::pictures_settled().await;
    assert!(Path::new(data["annotated_screenshot"].as_str().unwrap()).is_file());
    assert!(server.fake.generate_requests().is_empty(), "no model call");
    assert!(server.engine.history().list(10, 0).unwrap().is_empty());
    // Results are paths, numbers and sentences: no image unless asked.
    assert!(result.content.iter().all(|c| c.as_image().is_none()));

    // The noise tolerance is the agent's to set, within its range.
    let other = server.media_path("login-error.png");
    let refused = call(
        &client,
        "visual_compare",
        json!({"before": shot, "after": other, "blur": 9, "cwd": server.media.path()}),
    )
    .await;
    let body = structured(&refused);
    assert_eq!(body["success"], false);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("blur must be from 0 to 3"),
        "{body}"
    );
    assert!(server.fake.generate_requests().is_empty(), "refused first");
}

#[tokio::test]
async fn a_change_is_explained_and_matched_against_the_expected_changes() {
    let server = TestServer::start().await;
    let expected = "an error message appears under the password field";
    server.fake.set_reply_text(Some(
        json!({
            "description": "The login error is shown.",
            "summary": "An error message appeared and the button moved.",
            "found_changes": [{"region": "region 1", "change": "a red error message appeared"}],
            "unexpected_changes": [{"region": "region 2", "change": "the Sign in button moved 5 px down", "severity": "error"}],
            "expected_matched": [expected],
            "expected_missed": []
        })
        .to_string(),
    ));
    let client = server.mcp().await;
    let prepared = call(
        &client,
        "visual_prepare",
        json!({"expected_changes_list": [expected], "cwd": server.media.path()}),
    )
    .await;
    assert_eq!(structured(&prepared)["success"], true);
    let result = call(
        &client,
        "visual_compare",
        json!({
            "before": "login.png", "after": "login-error.png",
            "cwd": server.media.path(), "include_image": true
        }),
    )
    .await;
    let body = structured(&result);
    assert_eq!(body["success"], true, "{body}");
    let data = &body["data"];
    assert!(
        data["pixel_diff"]["total_changes"].as_u64().unwrap() >= 1,
        "{data}"
    );
    assert!(data["pixel_diff"]["changed_pixels"].as_u64().unwrap() > 0);
    assert_eq!(data["validation"]["expected_matched"], json!([expected]));
    assert_eq!(data["validation"]["expected_missed"], json!([]));
    assert_eq!(data["validation"]["regressions"], true);
    assert_eq!(
        data["validation"]["unexpected_found"],
        json!(["region 2: the Sign in button moved 5 px down"])
    );
    assert_eq!(
        data["agentic_analysis"]["found_changes"][0]["region"],
        "region 1"
    );
    // The model saw both images and the close-ups of the regions (the zoom pass), and was told
    // the regions and the expected change.
    let sent = server.fake.generate_requests().pop().unwrap();
    let parts = sent["contents"][0]["parts"].as_array().unwrap();
    let images: Vec<Vec<u8>> = parts
        .iter()
        .filter_map(|p| p["inlineData"]["data"].as_str())
        .map(|data| {
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap()
        })
        .collect();
    assert_eq!(images.len(), 3);
    let zoom = data["close_ups"].as_str().expect("a close-up sheet");
    assert_eq!(
        images[2],
        std::fs::read(zoom).unwrap(),
        "the sheet as written"
    );
    let sheet = image::load_from_memory(&images[2]).unwrap().to_rgb8();
    // The close-ups are at the screenshot's own scale or larger (the overview the model gets
    // may be shrunk): the widest region fits twice (BEFORE and AFTER) at one pixel a pixel.
    let widest = data["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["width"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(
        u64::from(sheet.width()) >= 2 * widest,
        "sheet {}x{}, widest region {widest}",
        sheet.width(),
        sheet.height()
    );
    let prompt: String = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    assert!(
        prompt.contains("region 1:") && prompt.contains(expected),
        "{prompt}"
    );
    assert!(prompt.contains("close-ups of region"), "{prompt}");
    // The call is in the history like any other.
    let id = data["interaction_id"].as_str().unwrap();
    let row = server.engine.history().get(id).unwrap().unwrap();
    assert_eq!(row.tool, "visual_compare");
    // The pictures and the result are in the workspace's store, and the model call's files
    // beside the picture it was shown, as for every analysis.
    let comparisons = server.media.path().join(".screenshots/comparisons");
    // The diff image and heat map, which no answer reads, are written beside the answer.
    vaider_visual::service::pictures_settled().await;
    assert_eq!(
        files_under(&comparisons),
        [
            "login-vs-login-error-annotation.png",
            "login-vs-login-error-annotation.png.VaiderInteractions",
            "login-vs-login-error-diff.json",
            "login-vs-login-error-diff.png",
            "login-vs-login-error-heatmap.png",
            "login-vs-login-error-zoom.png"
        ]
    );
    // The history UI's detail is a `comparison`: its pictures and its typed result.
    let detail: Value = server
        .http()
        .get(format!("{}/api/interactions/{id}", server.url))
        .bearer_auth(common::TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (&detail["kind"], &detail["runAgain"]),
        (&json!("comparison"), &json!("edit_prompt")),
        "{detail}"
    );
    let view = &detail["comparison"];
    for (field, which) in [
        ("diffUrl", "diff"),
        ("heatMapUrl", "heatmap"),
        ("closeUpsUrl", "zoom"),
    ] {
        // Signed for the page's <img>: `…&exp=…&sig=…` after the file's own query.
        let url = view[field].as_str().unwrap();
        assert!(
            url.starts_with(&format!("/api/interactions/{id}/media?which={which}&exp=")),
            "{url}"
        );
        assert!(url.contains("&sig="), "{url}");
    }
    assert_eq!(view["result"]["regions"], data["regions"], "{view}");
    assert_eq!(
        view["result"]["validation"]["expected_matched"],
        json!([expected])
    );
    assert_eq!(
        view["result"]["agentic_analysis"]["unexpected_changes"][0]["severity"],
        "error"
    );
    assert!(
        detail["verdicts"].is_array() && detail["adaptations"].is_array(),
        "{detail}"
    );
    assert!(detail.get("job").is_none(), "{detail}");
    // The thumbnail came because it was asked for, small.
    let image = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("a thumbnail");
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    let thumb = image::load_from_memory(&png).unwrap();
    assert!(thumb.width() <= 512 && thumb.height() <= 512);

    // The declared list was for that comparison only.
    let again = call(
        &client,
        "visual_compare",
        json!({"before": "login.png", "after": "login-error.png", "cwd": server.media.path()}),
    )
    .await;
    assert_eq!(
        structured(&again)["data"]["validation"]["expected_matched"],
        json!([])
    );
}

#[tokio::test]
async fn a_store_that_cannot_be_written_fails_clearly_and_leaves_nothing() {
    let server = TestServer::start().await;
    // A file where the comparisons folder should be.
    std::fs::create_dir_all(server.media.path().join(".screenshots")).unwrap();
    std::fs::write(
        server.media.path().join(".screenshots/comparisons"),
        b"in the way",
    )
    .unwrap();
    let client = server.mcp().await;
    let result = call(
        &client,
        "visual_compare",
        json!({"before": "login.png", "after": "dashboard.png", "cwd": server.media.path()}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let body = structured(&result);
    assert_eq!(body["success"], false);
    assert!(
        body["error"].as_str().unwrap().contains("comparisons"),
        "{body}"
    );
    assert!(server.fake.generate_requests().is_empty());
    assert_eq!(
        files_under(&server.media.path().join(".screenshots")),
        ["comparisons"]
    );

    // A missing screenshot names itself.
    let result = call(
        &client,
        "visual_compare",
        json!({"before": "nope.png", "after": "dashboard.png", "cwd": server.media.path()}),
    )
    .await;
    assert!(structured(&result)["error"]
        .as_str()
        .unwrap()
        .contains("nope.png"));
}

#[tokio::test]
async fn cleanup_keeps_the_newest_phases() {
    let server = TestServer::start().await;
    let store = vaider_visual::Store::in_project(server.media.path());
    let png = std::fs::read(server.media_path("login.png")).unwrap();
    for name in ["a", "b", "c", "d", "e"] {
        store
            .add(vaider_visual::NewScreenshot {
                name,
                description: "",
                platform: "web",
                png: &png,
                timestamp: "2026-11-22T18:00:00.000Z".into(),
                ignore_regions: Vec::new(),
            })
            .unwrap();
    }
    let client = server.mcp().await;
    let result = call(
        &client,
        "visual_cleanup",
        json!({"cwd": server.media.path()}),
    )
    .await;
    let body = structured(&result);
    let removed: Vec<u64> = body["data"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["phase"].as_u64().unwrap())
        .collect();
    assert_eq!(removed, [1, 2]);
    let result = call(
        &client,
        "visual_cleanup",
        json!({"cwd": server.media.path(), "phase_to_remove": 4}),
    )
    .await;
    assert_eq!(structured(&result)["data"]["removed"][0]["name"], "d");
    let left: Vec<u32> = store.list().unwrap().iter().map(|s| s.phase).collect();
    assert_eq!(left, [3, 5]);
}

/// Serves one HTML page on loopback until the test ends.
async fn serve_page(html: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    url
}

#[tokio::test]
async fn web_pages_are_captured_into_phases_and_compared() {
    let server = TestServer::start().await;
    let url = serve_page(
        "<html><body style='margin:0;background:#fff'>\
         <div style='position:absolute;left:30px;top:40px;width:100px;height:50px;background:#ff0000'></div>\
         </body></html>",
    )
    .await;
    let client = server.mcp().await;
    let mut paths = Vec::new();
    for (name, phase) in [("before-card-update", 1), ("after-card-update", 2)] {
        let result = call(
            &client,
            "visual_capture",
            json!({
                "name": name, "url": url, "target": "web",
                "viewport_width": 400, "viewport_height": 300, "cwd": server.media.path()
            }),
        )
        .await;
        let body = structured(&result);
        assert_eq!(body["success"], true, "{body}");
        let data = &body["data"];
        assert_eq!(data["phase"], phase);
        assert_eq!(data["dimensions"], json!({"width": 400, "height": 300}));
        let path = data["path"].as_str().unwrap().to_string();
        assert!(path.ends_with(&format!("{phase:02}-{name}.png")), "{path}");
        let shot = image::open(&path).unwrap().to_rgba8();
        assert_eq!(shot.get_pixel(50, 60).0, [255, 0, 0, 255], "the red block");
        assert_eq!(shot.get_pixel(10, 10).0, [255, 255, 255, 255]);
        paths.push(path);
    }
    // The same page twice: no change, no model call, and the comparison is named by phase.
    let result = call(
        &client,
        "visual_compare",
        json!({"before": paths[0], "after": paths[1], "cwd": server.media.path()}),
    )
    .await;
    let data = &structured(&result)["data"];
    assert_eq!(data["pixel_diff"]["changed_pixels"], 0, "{data}");
    assert!(data["annotated_screenshot"]
        .as_str()
        .unwrap()
        .ends_with("01-vs-02-annotation.png"));
    assert!(server.fake.generate_requests().is_empty());
    // A bad name is refused with what to use, and nothing is kept.
    let result = call(
        &client,
        "visual_capture",
        json!({"name": "../x", "url": url, "target": "web", "cwd": server.media.path()}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(structured(&result)["error"]
        .as_str()
        .unwrap()
        .contains("letters, digits"));
}

/// Nothing written is ever changed: two comparisons of files with the same name in different
/// folders (`a/home.png`, `b/home.png`) keep two sets of pictures, and the earlier history
/// entry still shows its own annotated picture, not the later one's.
#[tokio::test]
async fn two_comparisons_of_same_named_files_keep_two_pictures() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let root = server.media.path();
    for (folder, shot) in [("a", "login.png"), ("b", "login-error.png")] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        std::fs::copy(root.join(shot), root.join(folder).join("home.png")).unwrap();
    }
    let mut seen = Vec::new();
    for (before, after) in [("a/home.png", "b/home.png"), ("b/home.png", "a/home.png")] {
        let result = call(
            &client,
            "visual_compare",
            json!({"before": before, "after": after, "cwd": root}),
        )
        .await;
        let body = structured(&result);
        assert_eq!(body["success"], true, "{body}");
        let picture = body["data"]["annotated_screenshot"]
            .as_str()
            .unwrap()
            .to_string();
        let id = body["data"]["interaction_id"].as_str().unwrap().to_string();
        seen.push((picture.clone(), std::fs::read(&picture).unwrap(), id));
    }
    let [(first_path, first_bytes, first_id), (second_path, second_bytes, _)] = &seen[..] else {
        unreachable!()
    };
    assert_ne!(first_path, second_path, "one name for two comparisons");
    assert_ne!(first_bytes, second_bytes, "the two after-images differ");
    let row = server.engine.history().get(first_id).unwrap().unwrap();
    let shown = row.media_path.expect("the entry's picture");
    assert_eq!(&shown, first_path);
    assert_eq!(
        &std::fs::read(&shown).unwrap(),
        first_bytes,
        "the earlier entry's picture changed"
    );
    // Each comparison's result is its own too.
    let comparisons = root.join(".screenshots/comparisons");
    assert!(comparisons.join("home-vs-home-diff.json").is_file());
    assert!(comparisons.join("home-vs-home-2-diff.json").is_file());
}

#[tokio::test]
async fn pixelmatch_and_odiff_options_reach_the_diff_on_mcp_and_rest() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let root = server.media.path();
    let (before, after) = (
        server.media_path("login.png"),
        server.media_path("login-error.png"),
    );
    let compare = |extra: Value| {
        let mut args = json!({"before": before, "after": after, "cwd": root});
        for (key, value) in extra.as_object().unwrap() {
            args[key] = value.clone();
        }
        args
    };
    let changed = |body: &Value| {
        body["data"]["pixel_diff"]["changed_pixels"]
            .as_u64()
            .unwrap()
    };
    let plain = structured(&call(&client, "visual_compare", compare(json!({}))).await);
    assert_eq!(plain["success"], true, "{plain}");
    let all = changed(&plain);
    assert!(all > 0);
    // More sensitive: more pixels; anti-aliasing counted: at least as many.
    let sensitive = structured(
        &call(
            &client,
            "visual_compare",
            compare(json!({"threshold": 0.01})),
        )
        .await,
    );
    assert!(changed(&sensitive) > all, "{sensitive}");
    let with_aa = structured(
        &call(
            &client,
            "visual_compare",
            compare(json!({"include_anti_aliasing": true})),
        )
        .await,
    );
    assert!(changed(&with_aa) >= all, "{with_aa}");
    // Ignoring the whole picture: nothing changed, and no model call is made for it.
    let asked = server.fake.generate_requests().len();
    let (width, height) = image::image_dimensions(&before).unwrap();
    let ignored = structured(
        &call(
            &client,
            "visual_compare",
            compare(
                json!({"ignore_regions": [{"x": 0, "y": 0, "width": width, "height": height}]}),
            ),
        )
        .await,
    );
    assert_eq!(changed(&ignored), 0, "{ignored}");
    assert_eq!(server.fake.generate_requests().len(), asked);
    // A bad option is refused, naming it and its range, before anything is compared.
    let refused = structured(
        &call(
            &client,
            "visual_compare",
            compare(json!({"diff_color": "crimson"})),
        )
        .await,
    );
    assert_eq!(refused["success"], false);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("diff_color must be a colour as #rrggbb"),
        "{refused}"
    );

    // REST: the same tool, the same options and the same refusals.
    let http = reqwest::Client::new();
    let post = |body: Value| {
        http.post(format!("{}/v1/compare", server.url))
            .bearer_auth(common::TOKEN)
            .json(&body)
            .send()
    };
    let response = post(compare(json!({"threshold": 0.01}))).await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(changed(&body), changed(&sensitive));
    // The OpenAPI document lists every field of the answer, the ignored regions' too.
    let doc: Value = reqwest::get(format!("{}/v1/openapi.json", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let data_schema = &doc["paths"]["/v1/compare"]["post"]["responses"]["200"]["content"]
        ["application/json"]["schema"]["properties"]["data"];
    let region = json!([{"x": 0, "y": 0, "width": 10, "height": 10}]);
    let response = post(compare(json!({"ignore_regions": region})))
        .await
        .unwrap();
    let ignoring: Value = response.json().await.unwrap();
    assert_eq!(
        ignoring["data"]["ignored_regions"][0]["source"], "given",
        "{ignoring}"
    );
    for answer in [&body, &ignoring] {
        assert_eq!(
            undocumented(&answer["data"], data_schema, "data"),
            Vec::<String>::new()
        );
    }
    let request_fields = &doc["paths"]["/v1/compare"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"]["properties"];
    assert!(request_fields["ignore_regions"]["items"].is_object());
    let response = post(compare(json!({"threshold": 2}))).await.unwrap();
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("threshold must be from 0 to 1"),
        "{body}"
    );
}

/// The fields of a real answer its OpenAPI schema does not list, each with its path; objects
/// and arrays are followed into their `properties` and `items`.
fn undocumented(value: &Value, schema: &Value, at: &str) -> Vec<String> {
    match value {
        Value::Object(fields) => fields
            .iter()
            .flat_map(|(name, field)| match schema["properties"].get(name) {
                Some(field_schema) => undocumented(field, field_schema, &format!("{at}.{name}")),
                None => vec![format!("{at}.{name}")],
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .flat_map(|item| undocumented(item, &schema["items"], &format!("{at}[]")))
            .collect(),
        _ => Vec::new(),
    }
}

/// A page whose clock (an ad-like box with changing text and colour) differs in each version;
/// version 3 also changes the card elsewhere on the page.
fn clock_page(version: &str) -> String {
    let (time, clock, card) = match version {
        "/1" => ("10:00:01", "#ffcc00", "#ff0000"),
        "/2" => ("10:59:59", "#00ccff", "#ff0000"),
        _ => ("11:11:11", "#cc00ff", "#0000ff"),
    };
    let body = format!(
        "<html><body style='margin:0;background:#fff'>\
         <div id='clock' style='position:absolute;left:20px;top:10px;width:120px;height:30px;\
         font:20px monospace;background:{clock}'>{time}</div>\
         <div id='card' style='position:absolute;left:200px;top:100px;width:80px;height:60px;\
         background:{card}'></div></body></html>"
    );
    vaider_test_support::loopback::html(&body)
}

#[tokio::test]
async fn ignore_selectors_kept_with_captures_hide_the_clock_but_not_other_changes() {
    let server = TestServer::start().await;
    let (port, _) = vaider_test_support::loopback::listen(clock_page).await;
    let client = server.mcp().await;
    let cwd = server.media.path();
    let mut paths = Vec::new();
    for (name, version) in [("one", "1"), ("two", "2"), ("three", "3")] {
        let result = call(
            &client,
            "visual_capture",
            json!({
                "name": name, "url": format!("http://127.0.0.1:{port}/{version}"),
                "target": "web", "viewport_width": 400, "viewport_height": 300,
                "ignore_selectors": ["#clock", ".sponsor"], "cwd": cwd
            }),
        )
        .await;
        let body = structured(&result);
        assert_eq!(body["success"], true, "{body}");
        let data = &body["data"];
        assert_eq!(
            data["ignore_regions"],
            json!([{"selector": "#clock", "x": 20, "y": 10, "width": 120, "height": 30}]),
            "{data}"
        );
        assert_eq!(data["unmatched_selectors"], json!([".sponsor"]));
        // Kept in the store's metadata, as contracts.md §1 lists it.
        let meta = data["path"].as_str().unwrap().replace(".png", ".json");
        let meta: Value = serde_json::from_slice(&std::fs::read(meta).unwrap()).unwrap();
        assert_eq!(meta["ignore_regions"], data["ignore_regions"]);
        paths.push(data["path"].as_str().unwrap().to_string());
    }
    // Only the clock changed: nothing left to see, no model call.
    let result = call(
        &client,
        "visual_compare",
        json!({"before": paths[0], "after": paths[1], "cwd": cwd}),
    )
    .await;
    let data = &structured(&result)["data"];
    assert_eq!(data["pixel_diff"]["changed_pixels"], 0, "{data}");
    assert_eq!(
        data["ignored_regions"],
        json!([{"x": 20, "y": 10, "width": 120, "height": 30, "source": "selector",
                "selector": "#clock", "screenshot": "both"}])
    );
    assert!(server.fake.generate_requests().is_empty());
    // The card changed too: found, and the clock (with a given region) still ignored.
    let result = call(
        &client,
        "visual_compare",
        json!({"before": paths[1], "after": paths[2], "cwd": cwd,
               "ignore_regions": [{"x": 0, "y": 290, "width": 10, "height": 10}]}),
    )
    .await;
    let data = &structured(&result)["data"];
    assert_eq!(data["pixel_diff"]["total_changes"], 1, "{data}");
    assert_eq!(data["pixel_diff"]["changed_pixels"], 80 * 60, "{data}");
    let region = &data["regions"][0];
    assert_eq!(
        [
            &region["x"],
            &region["y"],
            &region["width"],
            &region["height"]
        ],
        [&json!(200), &json!(100), &json!(80), &json!(60)]
    );
    let sources: Vec<&str> = data["ignored_regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["given", "selector"]);
}

#[tokio::test]
async fn an_invalid_ignore_selector_is_refused_with_its_name() {
    let server = TestServer::start().await;
    let (port, _) = vaider_test_support::loopback::listen(clock_page).await;
    let client = server.mcp().await;
    let result = call(
        &client,
        "visual_capture",
        json!({"name": "bad", "url": format!("http://127.0.0.1:{port}/1"), "target": "web",
               "ignore_selectors": ["#clock", "##clock"], "cwd": server.media.path()}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let error = structured(&result)["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("`##clock` is not a valid CSS selector"),
        "{error}"
    );
    assert!(vaider_visual::Store::in_project(server.media.path())
        .list()
        .unwrap()
        .is_empty());
}
