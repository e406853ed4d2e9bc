//! How Vaider talks to the Chromium it starts, so that no other local user can. A DevTools
//! endpoint on a TCP port (`--remote-debugging-port`, what chromiumoxide launches with) answers
//! any process of any user on the machine: it could read `/json/version`, open `file:///…`
//! pages and run script in them. So on Unix Chromium is started with `--remote-debugging-pipe`
//! (`pipe`): its DevTools travel over two inherited pipes (fd 3 in, fd 4 out, NUL-separated
//! JSON), as Playwright and Puppeteer do, and Chromium listens on no port at all.
//!
//! chromiumoxide only speaks WebSocket, so `bridge` lends it one: a listener on 127.0.0.1 at a
//! random 128-bit path that accepts exactly one WebSocket (chromiumoxide's own connection,
//! made right after launch) and then closes the port; anything else is answered 404. The
//! warden gets its own browser-level session over the same pipe (`Target.attachToBrowserTarget`)
//! and talks to it through an in-process channel ([`WardenLink`]); the bridge numbers every
//! command anew and routes each answer by its number and each event by its session.
//!
//! On Windows (not built here) the pipe is not used: Chromium keeps its DevTools port, which
//! the warden reaches over a second WebSocket (`port`); SECURITY.md says so.

use serde_json::Value;
use tokio::sync::mpsc;

#[cfg(unix)]
pub(crate) mod bridge;
#[cfg(unix)]
pub(crate) mod pipe;
#[cfg_attr(unix, allow(dead_code))]
pub(crate) mod port;

/// The warden's side of its DevTools session: commands out (their `sessionId` left out for
/// the browser itself), answers and events in.
pub(crate) struct WardenLink {
    pub to_browser: mpsc::UnboundedSender<Value>,
    pub from_browser: mpsc::UnboundedReceiver<Value>,
}

/// Tasks that carry DevTools messages; stopped when dropped.
pub(crate) struct Carriers(pub Vec<tokio::task::JoinHandle<()>>);

impl Drop for Carriers {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// A started browser: chromiumoxide's side, the warden's, and what keeps them going.
pub(crate) struct Started {
    pub browser: chromiumoxide::Browser,
    pub handler: chromiumoxide::Handler,
    pub warden: WardenLink,
    /// Chromium, when Vaider started it itself (else chromiumoxide holds it).
    pub child: Option<tokio::process::Child>,
    pub carriers: Carriers,
}

/// Starts `program` with `args` (see `launch::chromium_args`), its DevTools on pipes.
#[cfg(unix)]
pub(crate) async fn start(
    program: &std::path::Path,
    args: &[String],
) -> Result<Started, crate::BrowserError> {
    let launch_error = |source| crate::BrowserError::Launch {
        path: program.to_path_buf(),
        source,
    };
    let piped = pipe::start(program, args)
        .map_err(|e| launch_error(chromiumoxide::error::CdpError::Io(e)))?;
    let bridge = bridge::start(piped.to_chromium, piped.from_chromium).await?;
    let (browser, handler) =
        chromiumoxide::Browser::connect_with_config(bridge.ws_url, crate::launch::handler_config())
            .await
            .map_err(launch_error)?;
    Ok(Started {
        browser,
        handler,
        warden: bridge.warden,
        child: Some(piped.child),
        carriers: bridge.carriers,
    })
}

#[cfg(not(unix))]
pub(crate) use port::start;
