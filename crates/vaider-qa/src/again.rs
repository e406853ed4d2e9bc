//! A test plan's run started again from its history entry (the history's "Run again"): the
//! plan the run recorded, against the same base URL, in the same workspace, as a new run.
//! Registered with the core ([`register_jobs`]), so the doors find it by the entry alone.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use vaider_core::again::{AgainError, JobAgain};
use vaider_core::history::Interaction;
use vaider_core::{Door, Vaider};

use crate::plan::TestRun;
use crate::service::{self, RunRequest};

/// The history's name for a plan's run, and its detail's kind.
struct PlanRunAgain;

impl JobAgain for PlanRunAgain {
    fn tool(&self) -> &'static str {
        "run_test_plan"
    }

    fn kind(&self) -> &'static str {
        "test_plan_run"
    }

    fn start_again(
        &self,
        engine: Arc<Vaider>,
        row: &Interaction,
        stored: Option<Value>,
    ) -> Result<String, AgainError> {
        let run = stored.and_then(|mut answer| {
            serde_json::from_value::<TestRun>(answer["testRun"].take()).ok()
        });
        let (Some(run), Some(workspace)) = (run, row.project.as_deref()) else {
            return Err(AgainError::Cannot(
                "This run did not record its plan, so it cannot be run again from here: run the plan from the Plans page.".into(),
            ));
        };
        let request = RunRequest {
            plan_id: run.plan_id,
            base_url: Some(run.base_url),
            workspace: PathBuf::from(workspace),
            door: Door::Ui,
            headless: true,
            run_id: None,
            // Run again asks nobody: a plan that was never approved is refused, saying how.
            approval: None,
        };
        let ready =
            service::prepare_run(&engine, request).map_err(|e| AgainError::Refused(Box::new(e)))?;
        let run_id = ready.run_id.clone();
        // The outcome is in the history and in .qa-agent/runs/.
        tokio::spawn(async move {
            if let Err(error) = service::run_prepared(&engine, ready).await {
                tracing::warn!(%error, "a run started again from the UI could not run");
            }
        });
        Ok(run_id)
    }
}

/// Makes a plan's run known to the core's "Run again". The server calls it when it starts.
pub fn register_jobs() {
    vaider_core::again::register_job(&PlanRunAgain);
}
