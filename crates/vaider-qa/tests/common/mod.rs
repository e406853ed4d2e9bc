//! What the plan tests share: the small web app they serve (a login form, a list, and variants
//! with a deliberate bug), a plan in the contract's format around some steps, an engine whose
//! model is the fake Gemini, and the sha256 by which the fake proves which bytes it saw.

#![allow(dead_code)]

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vaider_qa::TestPlan;

pub const APP: &str = r#"<!doctype html><html><head><title>Shop</title></head><body>
<form id="login">
  <label for="email">Email</label><input id="email" type="email">
  <label for="password">Password</label><input id="password" type="password">
  <button id="sign-in" type="button">Sign in</button>
</form>
<section id="home" hidden>
  <h1 id="greeting"></h1>
  <p id="count">0 items</p>
  <ul id="items"></ul>
  <button id="add" type="button">Add item</button>
</section>
<script>
  const BUG = "__BUG__";
  const $ = (id) => document.getElementById(id);
  function render(items) {
    $('items').innerHTML = items.map((i) => `<li>${i}</li>`).join('');
    $('count').textContent = `${items.length} items`;
  }
  let items = ['Tea', 'Bread', 'Milk'];
  if (BUG !== 'dead-button') {
    $('sign-in').addEventListener('click', () => {
      const name = $('email').value.split('@')[0];
      const shown = BUG === 'wrong-greeting' ? 'guest' : name.charAt(0).toUpperCase() + name.slice(1);
      $('greeting').textContent = `Welcome, ${shown}`;
      $('login').hidden = true;
      $('home').hidden = false;
      render(items);
    });
  }
  $('add').addEventListener('click', () => { items = [...items, 'Eggs']; render(items); });
</script></body></html>"#;

/// Serves the app at `/`, and its buggy variants at `/dead-button` and `/wrong-greeting`.
pub async fn serve_app() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]);
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let bug = match path {
                    "/dead-button" => "dead-button",
                    "/wrong-greeting" => "wrong-greeting",
                    _ => "none",
                };
                let body = APP.replace("__BUG__", bug);
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    base
}

pub fn plan(base_url: &str, steps: Value) -> TestPlan {
    serde_json::from_value(json!({
        "id": "login-plan", "name": "Login and list", "description": "",
        "project": {"name": "shop"}, "prompt": "a user can log in and sees their name",
        "baseUrl": base_url, "steps": steps,
        "createdAt": "2026-11-22T10:00:00.000Z", "updatedAt": "2026-11-22T10:00:00.000Z"
    }))
    .expect("a plan in the contract's format")
}

/// An engine whose model is the fake Gemini, which answers by rules a test can predict: it
/// judges a page by the phrases quoted in the criteria, and browses by the quoted hints of the
/// instruction.
pub async fn engine_with_fake() -> (
    std::sync::Arc<vaider_core::Vaider>,
    fake_gemini::FakeGemini,
    tempfile::TempDir,
) {
    let fake = fake_gemini::FakeGemini::start().await;
    let data = tempfile::tempdir().unwrap();
    let mut config = vaider_core::Config {
        data_dir: Some(data.path().to_path_buf()),
        ..vaider_core::Config::default()
    };
    config.gemini.base_url = fake.base_url();
    config.max_calls_per_minute = 0;
    let engine = vaider_core::Vaider::open(config).unwrap();
    engine.set_api_key(
        vaider_core::secrets::ApiKey::new(fake_gemini::FakeGemini::API_KEY),
        vaider_core::secrets::KeySource::Environment("GEMINI_API_KEY".into()),
    );
    (engine, fake, data)
}

pub fn sha256_hex(path: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}
