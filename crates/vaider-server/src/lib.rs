//! Vaider's doors over HTTP: the `/v1` REST contract, the `/mcp` Streamable HTTP endpoint and
//! the history UI with its JSON API, all calling the one analysis pipeline of `vaider-core`.
//! Binds to loopback only; every request passes the Host, Origin and token checks of [`guard`].

pub mod api_error;
pub mod auth;
pub mod embedded;
pub mod guard;
pub mod mcp;
pub mod openapi;
pub mod panics;
pub mod rest;
pub mod running;
pub mod signed_url;
pub mod text;
pub mod ui;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use vaider_core::Vaider;

pub use mcp::{ToolSet, VaiderMcp};

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Vaider>,
    /// The token and the UI's sessions.
    pub auth: Arc<auth::Auth>,
    /// The tray app's abilities (start at login); none for the headless server.
    pub desktop: Option<Arc<dyn embedded::DesktopIntegration>>,
    /// Cancelled when the server stops, so long-lived streams end with it.
    pub shutdown: CancellationToken,
}

/// What the router is built from.
pub struct Doors {
    pub engine: Arc<Vaider>,
    /// The token (following its file, when it came from one, so a rotation takes effect at
    /// once), the UI's sessions and login codes; shared with the shell that embeds the server,
    /// which mints login codes from it.
    pub auth: Arc<auth::Auth>,
    pub shutdown: CancellationToken,
    pub desktop: Option<Arc<dyn embedded::DesktopIntegration>>,
}

/// The whole HTTP surface without desktop abilities (the headless server, tests).
pub fn router(engine: Arc<Vaider>, token: &str, shutdown: CancellationToken) -> Router {
    let auth = Arc::new(auth::Auth::fixed(token).with_login_key(login_key(&engine)));
    router_with(Doors {
        engine,
        auth,
        shutdown,
        desktop: None,
    })
}

/// The data folder's login key, which `vaider ui` shows to have a login code minted; None
/// (no code over HTTP, said in the log) when it cannot be read or made.
pub fn login_key(engine: &Vaider) -> Option<String> {
    match vaider_core::secrets::ui_login_key(engine.data_dir()) {
        Ok(key) => Some(key),
        Err(error) => {
            tracing::warn!(%error, "no login key: `vaider ui` cannot sign a page in");
            None
        }
    }
}

/// The whole HTTP surface: REST, MCP, the UI and its API, with the guard in front of all.
pub fn router_with(doors: Doors) -> Router {
    let Doors {
        engine,
        auth,
        shutdown,
        desktop,
    } = doors;
    // The capabilities' tasks, known by name for the status and the history's "run again".
    vaider_visual::register_tasks();
    vaider_qa::register_tasks();
    vaider_validate::register_tasks();
    // A validation's failed toHaveScreenshot becomes a pending change in the review loop.
    vaider_visual::register_snapshot_review();
    // The capabilities' jobs, which the history's "run again" starts again through them.
    vaider_qa::register_jobs();
    vaider_validate::register_jobs();
    let state = AppState {
        engine: engine.clone(),
        auth,
        desktop,
        shutdown: shutdown.clone(),
    };
    let mcp_config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_allowed_origins(guard::ALLOWED_ORIGINS.iter().copied())
        .with_cancellation_token(shutdown.child_token());
    // One set of tasks for every session, and for the 2025-11-25 translation in front of them.
    let tasks = mcp::tasks::Tasks::new(engine.history().clone());
    let session_tasks = tasks.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(VaiderMcp::new(engine.clone()).with_tasks(session_tasks.clone())),
        // At most 256 live sessions: a client opening them in a loop closes its oldest.
        mcp::sessions::CappedSessions::new(mcp::sessions::MAX_SESSIONS).into(),
        mcp_config,
    );
    let mcp = tower::ServiceBuilder::new()
        .layer(axum::middleware::from_fn(mcp::session_end_answers_200))
        .layer(axum::middleware::from_fn(mcp::sse::readable_streams))
        .layer(axum::middleware::from_fn(mcp::tool_set::from_query))
        .layer(axum::middleware::from_fn_with_state(
            tasks,
            mcp::tasks::legacy::translate,
        ))
        .service(mcp);
    Router::new()
        .route("/v1/analyse", post(rest::analyse))
        .route("/v1/validate", post(rest::validate))
        .route("/v1/compare", post(rest::compare))
        .route("/v1/health", get(rest::health))
        .route("/v1/openapi.json", get(rest::openapi))
        .nest_service("/mcp", mcp)
        .merge(ui::routes())
        .fallback(rest::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check,
        ))
        // A panic anywhere inside (guard included) is answered in the contract's shape; MCP
        // tool calls run in their own tasks and are answered by `panics::answered` instead.
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panics::http_answer,
        ))
        // Outside the guard, so a preflight from an allowed origin is answered without a token.
        .layer(guard::cors())
        .with_state(state)
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("Vaider only listens on loopback (127.0.0.1 or ::1), not {0}: it must not be reachable from other machines.")]
    NotLoopback(IpAddr),
    #[error("Port {port} on {ip} is already in use{hint}. Stop the other process or choose another port with --port or VAIDER_PORT.")]
    PortInUse { ip: IpAddr, port: u16, hint: String },
    #[error("Could not listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("The server stopped: {0}")]
    Io(#[from] std::io::Error),
}

/// Binds the listener, refusing any address that is not loopback.
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, ServeError> {
    if !addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(addr.ip()));
    }
    tokio::net::TcpListener::bind(addr).await.map_err(|source| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            ServeError::PortInUse {
                ip: addr.ip(),
                port: addr.port(),
                hint: String::new(),
            }
        } else {
            ServeError::Bind { addr, source }
        }
    })
}

/// The router as a service that records each connection's local port, which the health
/// endpoint's proof names ([`running`]).
pub fn with_local_port(
    app: Router,
) -> axum::extract::connect_info::IntoMakeServiceWithConnectInfo<Router, running::LocalPort> {
    app.into_make_service_with_connect_info::<running::LocalPort>()
}

/// Serves until `shutdown` is cancelled.
pub async fn serve(
    listener: tokio::net::TcpListener,
    engine: Arc<Vaider>,
    token: &str,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let app = router(engine, token, shutdown.clone());
    axum::serve(listener, with_local_port(app))
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
}
