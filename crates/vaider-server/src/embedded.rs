//! Starting and stopping the whole server from inside another program: the tray app runs it
//! in-process, and `vaider serve` / `vaider ui` use the same path, so all three bind the same
//! port with the same token, config and data. The shell reads the token from here each time
//! it needs it (and may watch it), so `vaider token --rotate` reaches it without a restart.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use vaider_core::{secrets, Config, Vaider};

use crate::auth::Auth;
use crate::ServeError;

/// How often a running server looks at its token file for [`RunningServer::token_changes`]
/// (a stat; the file is read only when it changed).
const TOKEN_CHECK: Duration = Duration::from_secs(1);

/// What only the desktop app can do, offered to the UI through `/api/desktop`.
pub trait DesktopIntegration: Send + Sync + 'static {
    /// Whether the app starts at login.
    fn autostart(&self) -> Result<bool, String>;
    fn set_autostart(&self, on: bool) -> Result<(), String>;
}

#[derive(Default)]
pub struct StartOptions {
    /// Overrides the configured port (`--port`, or the tray's "use the next free port").
    pub port: Option<u16>,
    /// Loopback address to bind; 127.0.0.1 when none.
    pub host: Option<IpAddr>,
    pub desktop: Option<Arc<dyn DesktopIntegration>>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("Port {port} is already in use{}. Stop the other program or choose another port with --port, VAIDER_PORT or the settings{}.", if *by_vaider { " by another Vaider" } else { "" }, next_free.map(|p| format!(" (port {p} is free)")).unwrap_or_default())]
    PortInUse {
        port: u16,
        /// A Vaider health endpoint answers there: it is already running.
        by_vaider: bool,
        next_free: Option<u16>,
    },
    #[error("{0}")]
    Other(String),
}

/// A server running in this process.
pub struct RunningServer {
    pub addr: SocketAddr,
    pub engine: Arc<Vaider>,
    /// The token, following its file as the server's own guard does.
    token: Arc<Auth>,
    tokens: tokio::sync::watch::Sender<String>,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

impl RunningServer {
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The token clients use now: after `vaider token --rotate` the new one (read again from
    /// the token file when it changed), so the shell never hands out a token the server refuses.
    pub fn token(&self) -> String {
        self.token.token().to_string()
    }

    /// The current token, and each new one after a rotation while the server runs (looked for
    /// every [`TOKEN_CHECK`]): a shell showing the UI or a client's config follows it.
    pub fn token_changes(&self) -> tokio::sync::watch::Receiver<String> {
        self.tokens.subscribe()
    }

    /// The UI's address with a fresh one-time login code in the fragment (never the token):
    /// valid once, for [`crate::auth::LOGIN_CODE_TTL`], so make it just before a browser or
    /// webview opens it. `route` is the page's route, `#/` or `#/settings`.
    pub fn ui_url(&self, route: &str) -> String {
        sign_in_url(&self.base_url(), &self.token.mint_login_code(), route)
    }

    /// The token, the UI's sessions and login codes of this server.
    pub fn auth(&self) -> Arc<Auth> {
        self.token.clone()
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base_url())
    }

    /// A token that stops the server when cancelled (signals, the tray's Quit).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Waits until the server stops (after [`RunningServer::shutdown_token`] is cancelled).
    pub async fn wait(self) -> Result<(), ServeError> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(ServeError::Io(std::io::Error::other(e))),
        }
    }

    /// Stops accepting requests and waits for the open ones to end.
    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }
}

/// `base`'s UI on `route` (`#/…`), signing in with `code`; the page takes the code from the
/// fragment (which never reaches a server log) and trades it for a session.
pub fn sign_in_url(base: &str, code: &str, route: &str) -> String {
    let route = route.strip_prefix('#').unwrap_or(route);
    let route = if route.is_empty() { "/" } else { route };
    let joiner = if route.contains('?') { '&' } else { '?' };
    format!("{base}/#{route}{joiner}code={code}")
}

/// Loads the config (file, then environment), binds, and serves in the background.
pub async fn start(options: StartOptions) -> Result<RunningServer, StartError> {
    let mut config = Config::load().map_err(|e| StartError::Other(e.to_string()))?;
    if let Some(port) = options.port {
        config.port = port;
    }
    let addr = SocketAddr::new(
        options.host.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        config.port,
    );
    let token =
        secrets::server_token(&config.data_dir()).map_err(|e| StartError::Other(e.to_string()))?;
    let listener = bind(addr, &token).await?;
    let addr = listener
        .local_addr()
        .map_err(|e| StartError::Other(e.to_string()))?;
    let engine = Vaider::open(config).map_err(|e| StartError::Other(e.to_string()))?;
    let shutdown = CancellationToken::new();
    let auth = match secrets::token_file(engine.data_dir()) {
        Some(file) => Auth::following(&token, file),
        None => Auth::fixed(&token),
    };
    let auth = Arc::new(auth.with_login_key(crate::login_key(&engine)));
    let app = crate::router_with(crate::Doors {
        engine: engine.clone(),
        auth: auth.clone(),
        shutdown: shutdown.clone(),
        desktop: options.desktop,
    });
    let task = serve_in_background(listener, app, shutdown.clone());
    let (tokens, _) = tokio::sync::watch::channel(token);
    tokio::spawn(follow_token(auth.clone(), tokens.clone(), shutdown.clone()));
    Ok(RunningServer {
        addr,
        engine,
        token: auth,
        tokens,
        shutdown,
        task,
    })
}

/// Binds the address; a port in use is explained: whether a Vaider that proves it holds the
/// same token holds it ([`crate::running`]), and the next free one.
async fn bind(addr: SocketAddr, token: &str) -> Result<tokio::net::TcpListener, StartError> {
    match crate::bind(addr).await {
        Ok(listener) => Ok(listener),
        Err(ServeError::PortInUse { port, ip, .. }) => {
            let token = token.to_string();
            let by_vaider = tokio::task::spawn_blocking(move || {
                crate::running::find(SocketAddr::new(ip, port), &token)
                    == crate::running::Found::Vaider
            })
            .await
            .unwrap_or(false);
            Err(StartError::PortInUse {
                port,
                by_vaider,
                next_free: next_free_port(port),
            })
        }
        Err(e) => Err(StartError::Other(e.to_string())),
    }
}

/// Serves until `shutdown` is cancelled, letting the open requests end.
fn serve_in_background(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<Result<(), ServeError>> {
    tokio::spawn(async move {
        axum::serve(listener, crate::with_local_port(app))
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await?;
        Ok(())
    })
}

/// Publishes each new token until the server stops.
async fn follow_token(
    auth: Arc<Auth>,
    tokens: tokio::sync::watch::Sender<String>,
    shutdown: CancellationToken,
) {
    let mut ticks = tokio::time::interval(TOKEN_CHECK);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let token = auth.token();
        tokens.send_if_modified(|seen| {
            let changed = **seen != *token;
            if changed {
                *seen = token.to_string();
            }
            changed
        });
    }
}

/// The first port after `after` that can be bound on 127.0.0.1, looking a little way up.
pub fn next_free_port(after: u16) -> Option<u16> {
    (after.checked_add(1)?..=after.saturating_add(100)).find(|port| {
        std::net::TcpListener::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), *port)).is_ok()
    })
}
