//! A test validation started again from its history entry (the history's "Run again"): the
//! same test file with the same expectations and project folder, default rubric limits, as a
//! new validation. Registered with the core ([`register_jobs`]), so the doors find it by the
//! entry alone.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use vaider_core::again::{AgainError, JobAgain};
use vaider_core::history::Interaction;
use vaider_core::progress::NoProgress;
use vaider_core::{Door, Vaider};

use crate::service::{validate_test_as, AgentResult, ValidateRequest};
use crate::Limits;

struct ValidationAgain;

impl JobAgain for ValidationAgain {
    fn tool(&self) -> &'static str {
        "validate_test"
    }

    fn kind(&self) -> &'static str {
        "test_validation"
    }

    fn start_again(
        &self,
        engine: Arc<Vaider>,
        row: &Interaction,
        stored: Option<Value>,
    ) -> Result<String, AgainError> {
        let project_dir = stored
            .and_then(|answer| serde_json::from_value::<AgentResult>(answer).ok())
            .and_then(|answer| answer.metadata["project_dir"].as_str().map(str::to_string));
        let request = ValidateRequest {
            test_path: row.source.clone(),
            project_dir,
            grep: None,
            expectations: row.expectations.clone(),
            limits: Limits::default(),
            timeout: None,
            provider: None,
            model: None,
            door: Door::Ui,
            base_dirs: row.project.iter().map(PathBuf::from).collect(),
        };
        let id = vaider_core::job::new_id();
        let job_id = id.clone();
        tokio::spawn(async move {
            validate_test_as(&engine, request, job_id, &NoProgress).await;
        });
        Ok(id)
    }
}

/// Makes a validation known to the core's "Run again". The server calls it when it starts.
pub fn register_jobs() {
    vaider_core::again::register_job(&ValidationAgain);
}
