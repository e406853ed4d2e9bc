//! The tray app starts its server through `embedded::start`. A program that took Vaider's
//! port first and answers `{"status":"ok"}` like a Vaider is not taken for one: the start says
//! the port is held by something else, and the squatter receives no token, no login key and no
//! login code, only the health challenge that proves a Vaider.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread")]
async fn a_squatter_on_the_port_gets_nothing_from_the_tray_start() {
    let config = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // This test owns its process (nextest), so the environment is its own.
    std::env::remove_var("VAIDER_TOKEN");
    std::env::set_var("VAIDER_CONFIG_DIR", config.path());
    std::env::set_var("VAIDER_DATA_DIR", data.path());
    let token = vaider_core::secrets::server_token(data.path()).unwrap();
    let key = vaider_core::secrets::ui_login_key(data.path()).unwrap();

    let squatter = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = squatter.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(String::new()));
    let log = received.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = squatter.accept().await {
            let mut buffer = vec![0u8; 16 * 1024];
            let n = socket.read(&mut buffer).await.unwrap_or(0);
            log.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
            let body = r#"{"status":"ok","version":"0.1.0"}"#;
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
        }
    });

    let started = vaider_server::embedded::start(vaider_server::embedded::StartOptions {
        port: Some(port),
        ..Default::default()
    })
    .await;
    match started {
        Err(vaider_server::embedded::StartError::PortInUse { by_vaider, .. }) => {
            assert!(!by_vaider, "a program answering status ok is not a Vaider")
        }
        Err(other) => panic!("expected the port in use, got {other}"),
        Ok(_) => panic!("the port was held"),
    }
    let received = received.lock().unwrap().clone();
    assert!(received.contains("GET /v1/health?challenge="), "{received}");
    for secret in [token.as_str(), key.as_str()] {
        assert!(!received.contains(secret), "{received}");
    }
    assert!(
        !received.to_ascii_lowercase().contains("authorization"),
        "{received}"
    );
    assert!(!received.contains("login-code"), "{received}");
}
