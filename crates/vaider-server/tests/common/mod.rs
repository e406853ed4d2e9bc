//! A real Vaider server on a loopback port, wired to a fake Gemini on another, plus helpers
//! to reach it the way clients do: rmcp's MCP client and plain HTTP.

#![allow(dead_code)]

pub mod review;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_gemini::FakeGemini;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use vaider_core::secrets::{ApiKey, KeySource};
use vaider_core::{Config, Vaider};

pub const TOKEN: &str = "test-token-0123456789";

pub fn shared_media() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/media"
    ))
}

pub struct TestServer {
    pub url: String,
    pub engine: Arc<Vaider>,
    pub fake: FakeGemini,
    pub data: tempfile::TempDir,
    /// A writable folder holding copies of the shared media, so interaction folders can be
    /// written beside them.
    pub media: tempfile::TempDir,
    shutdown: CancellationToken,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> TestServer {
        let fake = FakeGemini::start().await;
        let data = tempfile::tempdir().unwrap();
        let media = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(shared_media()).expect("../shared/media beside the repo") {
            let entry = entry.unwrap();
            // Only the media files: a folder beside them (an interaction folder Vaider wrote
            // when someone analysed a file there by hand) is not test media.
            if entry.file_type().is_ok_and(|kind| kind.is_file()) {
                std::fs::copy(entry.path(), media.path().join(entry.file_name())).unwrap();
            }
        }
        let mut config = Config {
            data_dir: Some(data.path().to_path_buf()),
            ..Config::default()
        };
        config.gemini.base_url = fake.base_url();
        // Quick polls and retries keep the tests fast; the protocol is the same.
        config.gemini.poll_interval_ms = 20;
        config.gemini.retry_base_ms = 20;
        // Tests make many calls a minute; the per-minute budget has its own tests.
        config.max_calls_per_minute = 0;
        adjust(&mut config);
        let engine = Vaider::open(config).unwrap();
        engine.set_api_key(
            ApiKey::new(FakeGemini::API_KEY),
            KeySource::Environment("GEMINI_API_KEY".into()),
        );
        let listener = vaider_server::bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        tokio::spawn(vaider_server::serve(
            listener,
            engine.clone(),
            TOKEN,
            shutdown.clone(),
        ));
        TestServer {
            url,
            engine,
            fake,
            data,
            media,
            shutdown,
        }
    }

    pub fn media_path(&self, name: &str) -> PathBuf {
        self.media.path().join(name)
    }

    /// Writes a file into the media folder and returns its path.
    pub fn write_media(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.media.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub fn http(&self) -> reqwest::Client {
        reqwest::Client::new()
    }

    pub async fn post_analyse(&self, body: Value) -> (u16, Value) {
        let response = self
            .http()
            .post(format!("{}/v1/analyse", self.url))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn mcp(&self) -> McpClient {
        self.mcp_with(TestClient::default()).await
    }

    pub async fn mcp_with(&self, handler: TestClient) -> McpClient {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.url))
                .auth_header(TOKEN),
        );
        handler.serve(transport).await.expect("MCP handshake")
    }
}

pub type McpClient = RunningService<RoleClient, TestClient>;

/// An MCP client that records progress and can offer workspace roots.
#[derive(Clone, Default)]
pub struct TestClient {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub roots: Vec<PathBuf>,
    /// The user's answer to a question Vaider asks through the client (elicitation): None
    /// offers no elicitation at all.
    pub approve: Option<bool>,
    /// The questions Vaider asked.
    pub asked: Arc<Mutex<Vec<String>>>,
    /// Declares MCP Apps (`io.modelcontextprotocol/ui` with the HTML view type), as a host
    /// that shows views does.
    pub views: bool,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        if !self.roots.is_empty() {
            capabilities.roots = Some(Default::default());
        }
        if self.approve.is_some() {
            capabilities.elicitation = Some(Default::default());
        }
        if self.views {
            let settings = serde_json::json!({"mimeTypes": ["text/html;profile=mcp-app"]});
            let settings = settings.as_object().cloned().unwrap_or_default();
            capabilities.extensions =
                Some([("io.modelcontextprotocol/ui".to_string(), settings)].into());
        }
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("vaider-tests", "1.0"),
        )
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(
            self.roots
                .iter()
                .map(|p| rmcp::model::Root::new(format!("file://{}", p.display())))
                .collect(),
        ))
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let asked = serde_json::to_value(&request).unwrap_or_default();
        let message = asked["message"].as_str().unwrap_or_default().to_string();
        self.asked.lock().unwrap().push(message);
        let approve = self.approve.unwrap_or(false);
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(serde_json::json!({ "approve": approve })),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// Signs a UI page in the way the browser does: a login code minted with the token and the
/// data folder's login key (as `vaider ui` asks for one), traded at `POST /api/login` for the session secret the page
/// sends in `X-Vaider-Session`.
pub async fn sign_in(server: &TestServer) -> String {
    let http = server.http();
    let code: Value = http
        .post(format!("{}/api/login-code", server.url))
        .bearer_auth(TOKEN)
        .header(
            "x-vaider-login-key",
            vaider_core::secrets::ui_login_key(server.engine.data_dir()).unwrap(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let code = code["code"].as_str().unwrap();
    let session: Value = http
        .post(format!("{}/api/login", server.url))
        .json(&serde_json::json!({ "code": code }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    session["session"].as_str().unwrap().to_string()
}

pub async fn call(client: &McpClient, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .expect("tools/call transport")
}

pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// Polls until `check` holds, for at most five seconds.
pub async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..250 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
