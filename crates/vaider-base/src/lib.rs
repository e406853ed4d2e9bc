//! What every other Vaider crate builds on, and nothing else: the one error type every door
//! shows (with the media error it carries), the table of environment variables Vaider reads,
//! API keys, private atomic files, whose a file is (`owner`), the environment a child process
//! gets, and the progress an analysis reports. It depends on no other Vaider crate, so history, providers, media and
//! the engine can all use it without a cycle.

pub mod atomic_file;
pub mod child_env;
pub mod env_vars;
pub mod error;
pub mod media_error;
pub mod owner;
pub mod progress;
pub mod secrets;

pub use error::{ErrorCode, VaiderError};
