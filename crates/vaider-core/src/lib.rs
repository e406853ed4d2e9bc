//! Vaider's engine, without any web framework or window: the one analysis pipeline every door
//! calls (`pipeline`, `engine`), the tasks and their prompts, the analysis types, the config,
//! the table of models and the cost. The history (vaider-history), the media (vaider-media),
//! the providers (vaider-providers) and the error type with the shared helpers (vaider-base)
//! are their own crates, re-exported here under their old names. The `vaider` binary, the
//! HTTP server and the tray app all use it.

// Re-exports of the crate that owns them (vaider-base), so `vaider_core::error` and the like
// keep naming them.
pub use vaider_base::{atomic_file, child_env, env_vars, error, progress, secrets};
// Re-exports of the crate that owns them (vaider-history).
pub use vaider_history as history;
pub use vaider_history::{interaction_log, job, lease, recovery};
// Re-exports of the crate that owns them (vaider-media).
pub use vaider_media::{image_fit, keyframes, media};
// Re-exports of the crate that owns them (vaider-providers).
pub use vaider_providers::{aws, body, guidance, provider, quota, sampling, tokens};

pub mod again;
pub mod analysis;
pub mod client_setup;
pub mod config;
pub mod cost;
pub mod engine;
pub mod models;
pub mod own_secrets;
pub mod person;
pub mod pipeline;
pub mod prompts;
pub mod redact;
pub mod source;
pub mod status;
pub mod task;
pub mod updates;
pub mod workspace;

pub use analysis::{AnalysisRequest, AnalysisResult, Door, Tool};
pub use config::Config;
pub use engine::Vaider;
pub use error::{ErrorCode, VaiderError};
pub use pipeline::{AnalysisFailure, VERSION};
