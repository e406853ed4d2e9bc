//! Vaider's providers: the adapters that send media and a question to a vision model service
//! and read its answer (`provider`: Gemini, OpenAI-compatible, Anthropic, Bedrock), with what
//! only they need: AWS signing and credentials (`aws`), the per-minute quotas (`quota`),
//! Gemini's token rules (`tokens`), which moments of a video a model is shown (`sampling`),
//! a provider's resolved settings (`settings`), how each model family is asked for each job
//! (`guidance`), and the bounded read of any upstream body (`body`). The pipeline in vaider-core picks the
//! provider and calls it; nothing here knows the doors or the history.

pub mod aws;
pub mod body;
pub mod guidance;
pub mod provider;
pub mod quota;
pub mod sampling;
pub mod settings;
pub mod tokens;
