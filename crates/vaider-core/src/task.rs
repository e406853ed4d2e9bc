//! A model task: what one call asks of the model (its words, the answer's shape and the media
//! it looks at), defined by the capability that asks it. The pipeline runs any task the same
//! way (cache, quota, retries, recording, cost) and knows none by name: analysis defines its
//! tools in `analysis::tools`, visual comparison and the QA plans define theirs in their own
//! crates. See docs/architecture.md.

use std::fmt;
use std::sync::RwLock;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::analysis::TaskOptions;
pub use crate::guidance::Job;

/// What a task looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskMedia {
    Video,
    Image,
    /// Two images, the first given as the request's `compare_with`.
    TwoImages,
}

/// Everything the pipeline needs to ask the model one thing. A capability defines its tasks as
/// constants and hands them to the pipeline as a [`Tool`].
#[derive(Debug)]
pub struct Task {
    /// The name the history stores and filters by (the MCP tool's name where there is one).
    pub name: &'static str,
    pub media: TaskMedia,
    /// What the call is for (describe, judge, compare, plan, browse): with the model, it
    /// decides the sampling and reasoning settings sent (`vaider_providers::guidance`).
    pub job: Job,
    /// The task's part of the system prompt, after the common one; None: the common one alone.
    pub system: Option<&'static str>,
    /// The prompt used when the caller gives none.
    pub default_prompt: &'static str,
    /// The answer's own fields beside `description`, as JSON Schema properties; None: the
    /// answer is plain text (unless expectations are asked).
    pub answer: Option<fn() -> Value>,
    /// Lines the request's options add to the user prompt.
    pub options_note: fn(&TaskOptions) -> Option<String>,
    /// What each image is, told to the model before it, in the order sent.
    pub image_labels: &'static [&'static str],
    /// The label of the images after those (close-ups), when the task sends any.
    pub more_images_label: Option<&'static str>,
}

/// For a task whose options add nothing to the prompt.
pub fn no_options_note(_: &TaskOptions) -> Option<String> {
    None
}

/// A handle to a task, carried by every request and stored in history by its name.
#[derive(Clone, Copy)]
pub struct Tool(&'static Task);

impl Tool {
    pub const fn new(task: &'static Task) -> Tool {
        Tool(task)
    }

    pub fn task(self) -> &'static Task {
        self.0
    }

    pub fn as_str(self) -> &'static str {
        self.0.name
    }

    /// Whether the task looks at a video (all others look at images).
    pub fn takes_video(self) -> bool {
        self.0.media == TaskMedia::Video
    }

    /// Whether the task looks at two images, the first given as `compare_with`.
    pub fn takes_two_images(self) -> bool {
        self.0.media == TaskMedia::TwoImages
    }
}

impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Tool {}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.name)
    }
}

/// The tasks known to this process: analysis's always, and each capability's once it has
/// called [`register`] (its service does when it is set up). Used where a task is found by its
/// stored name (running a history entry again) and to list what a provider can be asked.
static REGISTERED: RwLock<Vec<Tool>> = RwLock::new(Vec::new());

/// Makes a capability's tasks known by name; registering one twice changes nothing.
pub fn register(tools: &[Tool]) {
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    for tool in tools {
        if !registered.contains(tool) {
            registered.push(*tool);
        }
    }
}

/// Every known task: analysis's first, then the registered ones in the order they came.
pub fn catalog() -> Vec<Tool> {
    let mut all = crate::analysis::tools::ALL.to_vec();
    let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    for tool in registered.iter() {
        if !all.contains(tool) {
            all.push(*tool);
        }
    }
    all
}

/// The known task of that name.
pub fn by_name(name: &str) -> Option<Tool> {
    catalog().into_iter().find(|t| t.as_str() == name)
}
