//! Files API protocol tests: resumable upload, polling, FAILED, delete, auth on the Files API.

mod common;

use common::*;
use fake_gemini::FakeGemini;
use reqwest::Client;
use serde_json::Value;

#[tokio::test]
async fn resumable_upload_in_256k_chunks() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let bytes = data(2 * KIB256 + 90_000);

    let start = start_upload(
        &fake,
        &client,
        bytes.len() as u64,
        "video/webm",
        "login flow",
    )
    .await;
    assert_eq!(start.status(), 200);
    assert_eq!(
        header(&start, "x-goog-upload-status").as_deref(),
        Some("active")
    );
    let url = header(&start, "x-goog-upload-url").expect("session url");
    assert!(url.starts_with(&fake.base_url()), "{url}");
    assert!(url.contains("upload_id="), "{url}");
    assert!(start.bytes().await.expect("body").is_empty());

    let r = chunk(&client, &url, 0, "upload", bytes[..KIB256].to_vec()).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        header(&r, "x-goog-upload-status").as_deref(),
        Some("active")
    );
    assert_eq!(
        header(&r, "x-goog-upload-size-received").as_deref(),
        Some("262144")
    );
    assert!(r.bytes().await.expect("body").is_empty());

    let r = chunk(
        &client,
        &url,
        KIB256 as u64,
        "upload",
        bytes[KIB256..2 * KIB256].to_vec(),
    )
    .await;
    assert_eq!(r.status(), 200);

    let q = query(&client, &url).await;
    assert_eq!(q.status(), 200);
    assert_eq!(
        header(&q, "x-goog-upload-status").as_deref(),
        Some("active")
    );
    assert_eq!(
        header(&q, "x-goog-upload-size-received").as_deref(),
        Some("524288")
    );

    let r = chunk(
        &client,
        &url,
        2 * KIB256 as u64,
        "upload, finalize",
        bytes[2 * KIB256..].to_vec(),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-goog-upload-status").as_deref(), Some("final"));
    let body: Value = r.json().await.expect("json");
    let file = &body["file"];
    let name = file["name"].as_str().expect("name");
    let id = name.strip_prefix("files/").expect("files/ prefix");
    assert_eq!(file["displayName"], "login flow");
    assert_eq!(file["mimeType"], "video/webm");
    assert_eq!(file["sizeBytes"], bytes.len().to_string());
    assert_eq!(file["sha256Hash"], google_sha256_hash(&bytes));
    assert_eq!(
        file["uri"],
        format!("{}/v1beta/files/{id}", fake.base_url())
    );
    assert_eq!(file["state"], "PROCESSING");
    let created =
        chrono::DateTime::parse_from_rfc3339(file["createTime"].as_str().expect("createTime"))
            .expect("rfc3339");
    let expires = chrono::DateTime::parse_from_rfc3339(
        file["expirationTime"].as_str().expect("expirationTime"),
    )
    .expect("rfc3339");
    assert_eq!((expires - created).num_seconds(), 48 * 3600);
    assert!(
        chrono::DateTime::parse_from_rfc3339(file["updateTime"].as_str().expect("updateTime"))
            .is_ok()
    );

    let records = fake.files();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].name, name);
    assert_eq!(records[0].display_name, "login flow");
    assert_eq!(records[0].sha256_hex, sha_hex(&bytes));
    assert_eq!(records[0].size_bytes, bytes.len() as u64);
    assert_eq!(records[0].chunks, 3);

    // Chunk requests carry no key and are recorded with their length only.
    let lens: Vec<u64> = fake
        .requests()
        .iter()
        .filter(|r| r.query.as_deref().is_some_and(|q| q.contains("upload_id=")))
        .map(|r| r.body_len)
        .collect();
    assert_eq!(lens, vec![262_144, 262_144, 0, 90_000]);
}

#[tokio::test]
async fn wrong_offset_is_rejected_and_the_session_survives() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let bytes = data(KIB256 + 10);
    let url = session(&fake, &client, bytes.len() as u64, "video/mp4").await;
    let r = chunk(&client, &url, 0, "upload", bytes[..KIB256].to_vec()).await;
    assert_eq!(r.status(), 200);

    // Resending from 0 and skipping ahead are both refused.
    for offset in [0u64, 2 * KIB256 as u64] {
        let r = chunk(
            &client,
            &url,
            offset,
            "upload, finalize",
            bytes[KIB256..].to_vec(),
        )
        .await;
        assert_eq!(
            header(&r, "x-goog-upload-size-received").as_deref(),
            Some("262144")
        );
        expect_error(r, 400, "INVALID_ARGUMENT").await;
    }
    let r = chunk(
        &client,
        &url,
        KIB256 as u64,
        "upload, finalize",
        bytes[KIB256..].to_vec(),
    )
    .await;
    assert_eq!(r.status(), 200);
    let file: Value = r.json().await.expect("json");
    assert_eq!(file["file"]["sha256Hash"], google_sha256_hash(&bytes));
}

#[tokio::test]
async fn non_final_chunk_must_be_a_multiple_of_256k() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let bytes = data(KIB256 + 1000);
    let url = session(&fake, &client, bytes.len() as u64, "video/webm").await;

    let r = chunk(&client, &url, 0, "upload", bytes[..KIB256 + 500].to_vec()).await;
    let body = expect_error(r, 400, "INVALID_ARGUMENT").await;
    assert!(body["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("262144"));
    // Nothing of the refused chunk was kept.
    let q = query(&client, &url).await;
    assert_eq!(
        header(&q, "x-goog-upload-size-received").as_deref(),
        Some("0")
    );

    // The last chunk may have any size; one request may upload and finalize everything.
    let r = chunk(&client, &url, 0, "upload, finalize", bytes.clone()).await;
    assert_eq!(r.status(), 200);
    let file: Value = r.json().await.expect("json");
    assert_eq!(file["file"]["sha256Hash"], google_sha256_hash(&bytes));
    assert_eq!(fake.files()[0].chunks, 1);
}

#[tokio::test]
async fn finalize_with_wrong_total_and_unknown_session() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let url = session(&fake, &client, 1000, "video/webm").await;
    let r = chunk(&client, &url, 0, "upload, finalize", data(999)).await;
    expect_error(r, 400, "INVALID_ARGUMENT").await;
    assert!(fake.files().is_empty());

    let url = session(&fake, &client, 10, "video/webm").await;
    let r = chunk(&client, &url, 0, "upload, finalize", data(11)).await;
    expect_error(r, 400, "INVALID_ARGUMENT").await;

    let bogus = format!(
        "{}/upload/v1beta/files?upload_id=nope&upload_protocol=resumable",
        fake.base_url()
    );
    let r = chunk(&client, &bogus, 0, "upload, finalize", data(10)).await;
    expect_error(r, 404, "NOT_FOUND").await;
}

#[tokio::test]
async fn start_is_validated() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let base = fake.base_url();

    // No resumable protocol header.
    let r = client
        .post(format!("{base}/upload/v1beta/files"))
        .header("x-goog-api-key", KEY)
        .header("X-Goog-Upload-Command", "start")
        .header("X-Goog-Upload-Header-Content-Length", "10")
        .header("X-Goog-Upload-Header-Content-Type", "video/webm")
        .send()
        .await
        .expect("send");
    expect_error(r, 400, "INVALID_ARGUMENT").await;

    // Over 2 GiB.
    let r = start_upload(
        &fake,
        &client,
        2 * 1024 * 1024 * 1024 + 1,
        "video/webm",
        "big",
    )
    .await;
    expect_error(r, 400, "INVALID_ARGUMENT").await;
    // Exactly 2 GiB is allowed.
    let r = start_upload(&fake, &client, 2 * 1024 * 1024 * 1024, "video/webm", "big").await;
    assert_eq!(r.status(), 200);

    // camelCase metadata, on the /v1/ prefix, with the key in the query.
    let r = client
        .post(format!("{base}/upload/v1/files"))
        .query(&[("key", KEY)])
        .header("X-Goog-Upload-Protocol", "resumable")
        .header("X-Goog-Upload-Command", "start")
        .header("X-Goog-Upload-Header-Content-Length", "4")
        .header("X-Goog-Upload-Header-Content-Type", "image/png")
        .header("Content-Type", "application/json")
        .body(r#"{"file":{"displayName":"camel"}}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let url = header(&r, "x-goog-upload-url").expect("url");
    assert!(url.contains("/upload/v1/files?upload_id="));
    let r = chunk(&client, &url, 0, "upload, finalize", data(4)).await;
    let f: Value = r.json().await.expect("json");
    assert_eq!(f["file"]["displayName"], "camel");

    // Unknown metadata fields are refused, like Google's JSON parser does.
    let r = client
        .post(format!("{base}/upload/v1beta/files"))
        .header("x-goog-api-key", KEY)
        .header("X-Goog-Upload-Protocol", "resumable")
        .header("X-Goog-Upload-Command", "start")
        .header("X-Goog-Upload-Header-Content-Length", "4")
        .header("X-Goog-Upload-Header-Content-Type", "image/png")
        .body(r#"{"file":{"title":"x"}}"#)
        .send()
        .await
        .expect("send");
    let body = expect_error(r, 400, "INVALID_ARGUMENT").await;
    assert!(body["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("Unknown name \"title\""));
}

#[tokio::test]
async fn files_api_needs_the_key() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let file = upload(&fake, &client, &data(100), "video/webm").await;
    let name = file["name"].as_str().expect("name");

    let r = client
        .get(format!("{}/v1beta/{name}", fake.base_url()))
        .header("x-goog-api-key", "wrong")
        .send()
        .await
        .expect("send");
    let body = expect_error(r, 400, "INVALID_ARGUMENT").await;
    assert_eq!(body["error"]["details"][0]["reason"], "API_KEY_INVALID");

    let r = client
        .get(format!("{}/v1beta/{name}", fake.base_url()))
        .send()
        .await
        .expect("send");
    expect_error(r, 403, "PERMISSION_DENIED").await;

    let r = start_upload(&fake, &client, 10, "video/webm", "x").await;
    assert_eq!(r.status(), 200);
    fake.set_api_key("other-key");
    let r = start_upload(&fake, &client, 10, "video/webm", "x").await;
    expect_error(r, 400, "INVALID_ARGUMENT").await;
}

#[tokio::test]
async fn polling_goes_from_processing_to_active() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.set_processing_polls(2);
    let file = upload(&fake, &client, &data(5000), "video/webm").await;
    assert_eq!(file["state"], "PROCESSING");
    assert!(file.get("videoMetadata").is_none());
    let name = file["name"].as_str().expect("name");

    let mut states = Vec::new();
    for prefix in ["v1beta", "v1", "v1beta"] {
        let r = client
            .get(format!("{}/{prefix}/{name}", fake.base_url()))
            .header("x-goog-api-key", KEY)
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
        let f: Value = r.json().await.expect("json");
        assert!(
            f.get("file").is_none(),
            "GET returns the File without a wrapper"
        );
        states.push(f["state"].as_str().unwrap_or("").to_string());
        if f["state"] == "ACTIVE" {
            // No duration in random bytes: a plausible default.
            assert_eq!(f["videoMetadata"]["videoDuration"], "6s");
        }
    }
    assert_eq!(states, ["PROCESSING", "PROCESSING", "ACTIVE"]);
    assert_eq!(fake.files()[0].state, "ACTIVE");

    // Zero polls: ACTIVE at once.
    fake.set_processing_polls(0);
    let f = upload(&fake, &client, &data(10), "image/png").await;
    assert_eq!(f["state"], "ACTIVE");
    assert!(f.get("videoMetadata").is_none());
}

#[tokio::test]
async fn real_video_gets_its_duration() {
    let Some(dir) = media_dir() else {
        eprintln!("shared media not found; skipping");
        return;
    };
    let bytes = std::fs::read(dir.join("login-flow.webm")).expect("read webm");
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let f = active_file(&fake, &client, &bytes, "video/webm").await;
    assert_eq!(f["videoMetadata"]["videoDuration"], "5.520s");
    assert_eq!(f["sizeBytes"], "33635");
}

#[tokio::test]
async fn processing_can_fail() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.set_fail_processing(true);
    let f = upload(&fake, &client, &data(100), "video/webm").await;
    let f = wait_processed(&fake, &client, f["name"].as_str().expect("name")).await;
    assert_eq!(f["state"], "FAILED");
    assert!(f["error"]["code"].is_number());
    assert!(f["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    assert!(f.get("videoMetadata").is_none());
    assert_eq!(fake.files()[0].state, "FAILED");

    fake.set_fail_processing(false);
    let f = active_file(&fake, &client, &data(100), "video/webm").await;
    assert_eq!(f["state"], "ACTIVE");
}

#[tokio::test]
async fn delete_and_list() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.set_processing_polls(0);
    let a = upload(&fake, &client, &data(10), "video/webm").await;
    let b = upload(&fake, &client, &data(20), "video/webm").await;
    let list: Value = client
        .get(format!("{}/v1beta/files", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list["files"].as_array().map(Vec::len), Some(2));

    let name = a["name"].as_str().expect("name");
    let r = client
        .delete(format!("{}/v1beta/{name}", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .send()
        .await
        .expect("delete");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.expect("json"),
        serde_json::json!({})
    );
    let gone = get_file(&fake, &client, name).await;
    let body = expect_error(gone, 403, "PERMISSION_DENIED").await;
    assert!(body["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("may not exist"));
    let again = client
        .delete(format!("{}/v1/{name}", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .send()
        .await
        .expect("delete");
    expect_error(again, 403, "PERMISSION_DENIED").await;

    let records = fake.files();
    assert!(records[0].deleted && !records[1].deleted);
    assert_eq!(records[1].name, b["name"].as_str().unwrap_or(""));
}

#[tokio::test]
async fn interrupted_chunk_keeps_whole_blocks_for_resuming() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let bytes = data(3 * KIB256);
    let url = session(&fake, &client, bytes.len() as u64, "video/webm").await;

    // A request whose connection breaks after 300 000 of its 786 432 body bytes.
    {
        use tokio::io::AsyncWriteExt;
        let path = url.strip_prefix(&fake.base_url()).expect("same host");
        let addr = fake.base_url().trim_start_matches("http://").to_string();
        let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Goog-Upload-Offset: 0\r\n\
             X-Goog-Upload-Command: upload\r\nContent-Length: {}\r\n\r\n",
            bytes.len()
        );
        tcp.write_all(head.as_bytes()).await.expect("write");
        tcp.write_all(&bytes[..300_000]).await.expect("write");
        tcp.flush().await.expect("flush");
        tcp.shutdown().await.expect("shutdown");
    }

    // The server keeps what arrived in whole 256 KiB blocks; query says where to resume.
    let mut received = None;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        let q = query(&client, &url).await;
        if q.status() == 200 {
            received = header(&q, "x-goog-upload-size-received");
            if received.as_deref() == Some("262144") {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(received.as_deref(), Some("262144"));
    let r = chunk(
        &client,
        &url,
        KIB256 as u64,
        "upload, finalize",
        bytes[KIB256..].to_vec(),
    )
    .await;
    assert_eq!(r.status(), 200);
    let f: Value = r.json().await.expect("json");
    assert_eq!(f["file"]["sha256Hash"], google_sha256_hash(&bytes));
}

#[tokio::test]
async fn larger_upload_in_8mib_chunks() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let total = 20 * 1024 * 1024 + 12_345;
    let bytes = data(total);
    let url = session(&fake, &client, total as u64, "video/mp4").await;
    let step = 8 * 1024 * 1024;
    let mut offset = 0;
    while offset < total {
        let end = (offset + step).min(total);
        let cmd = if end == total {
            "upload, finalize"
        } else {
            "upload"
        };
        let r = chunk(
            &client,
            &url,
            offset as u64,
            cmd,
            bytes[offset..end].to_vec(),
        )
        .await;
        assert_eq!(r.status(), 200);
        offset = end;
    }
    let f = &fake.files()[0];
    assert_eq!(f.sha256_hex, sha_hex(&bytes));
    assert_eq!(f.chunks, 3);
}
