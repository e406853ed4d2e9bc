//! Vaider's tray app: a thin shell around the server of `vaider-server`, which it runs
//! in-process (same port, token, config and data as `vaider serve`). The tray shows the
//! server's state and the MCP config for each agent; the window shows the server's web UI.
//! Closing the window keeps the app running in the tray; only Quit ends it.

mod autostart;
mod commands;
mod server;
mod tray;
mod window;

use std::sync::atomic::{AtomicBool, Ordering};

use tauri::{Manager, RunEvent};
use vaider_core::Config;

/// Set by the tray's Quit: the one exit that is not turned back into "stay in the tray".
#[derive(Default)]
struct Quitting(AtomicBool);

impl Quitting {
    fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

pub fn run() {
    init_logging();
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
        .manage(Quitting::default())
        .invoke_handler(tauri::generate_handler![
            commands::server_status,
            commands::use_port,
            commands::retry
        ])
        .setup(move |app| {
            autostart::enable_on_first_run(app.handle(), &Config::dir());
            tray::create(app.handle())?;
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
        // Closing the window (the last one) must not end the app: it lives in the tray.
        RunEvent::ExitRequested { code, api, .. }
            if code.is_none() && !app.state::<Quitting>().is_set() =>
        {
            api.prevent_exit();
        }
        RunEvent::Exit => server::stop(app),
        _ => {}
    });
}

/// Logs go to stderr like `vaider serve`'s; `VAIDER_LOG` sets the level.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("VAIDER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
