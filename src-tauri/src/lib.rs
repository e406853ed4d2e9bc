//! Vaider's tray app: a thin shell around the server of `vaider-server`, which it runs
//! in-process (same port, token, config and data as `vaider serve`). The tray shows the
//! server's state and the MCP config for each agent; the window shows the server's web UI.
//! Closing the window keeps the app running in the tray; only Quit ends it.

mod autostart;
mod commands;
mod server;
mod tray;
mod updates;
mod window;

use tauri::RunEvent;
use vaider_core::Config;

pub fn run() {
    init_logging();
    // One line per panic, no backtrace (which grows the process by some 200 MB).
    vaider_server::panics::install_quiet_hook();
    // The login entry starts the app in the tray only.
    let open_window = !std::env::args().any(|arg| arg == autostart::HIDDEN_ARG);
    let app = tauri::Builder::default()
        // First: a second launch must hand over before anything else starts.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            if !args.iter().any(|arg| arg == autostart::HIDDEN_ARG) {
                window::focus(app);
            }
        }))
        .plugin(autostart::plugin())
        .plugin(tauri_plugin_clipboard_manager::init())
        .manage(server::Server::default())
        .invoke_handler(tauri::generate_handler![
            commands::server_status,
            commands::use_port,
            commands::retry
        ])
        .setup(move |app| {
            autostart::enable_on_first_run(app.handle(), &Config::dir());
            updates::start(app.handle());
            // Without a tray the window and a second launch still work: not a reason to stop.
            if let Err(e) = tray::create(app.handle()) {
                tracing::error!("no tray icon: {e}");
            }
            server::launch(app.handle().clone(), open_window);
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: Vaider could not start its window system: {e}");
            std::process::exit(1);
        }
    };
    app.run(|app, event| match event {
        // Closing the window (the last one) must not end the app: it lives in the tray. Only
        // the tray's Quit (`AppHandle::exit`, which carries an exit code) ends it.
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        // macOS: a click on the Dock icon brings the window back.
        #[cfg(target_os = "macos")]
        RunEvent::Reopen { .. } => window::focus(app),
        RunEvent::Exit => server::stop(app),
        _ => {}
    });
}

/// Logs go to stderr like `vaider serve`'s (colours only on a terminal, not in a log file);
/// `VAIDER_LOG` sets the level.
fn init_logging() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("VAIDER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}
