//! QA test plans, as the agents' design has them (contracts.md §3): a plan is steps written
//! from plain-English requirements; a run performs them in a real local browser, stops at the
//! first failure and keeps evidence for every step. This crate holds the plan and run shapes
//! (`plan`), their files in the project's `.qa-agent/` folder (`store`), and the browser steps
//! (`steps`, the model's judgement in `judge`, its browsing loop in `browse`) a run (`run`)
//! performs.

pub mod again;
pub mod browse;
pub mod check;
pub mod context;
pub mod error;
pub mod export;
pub mod generate;
pub mod import;
pub mod judge;
pub mod plan;
pub mod run;
pub mod secret_values;
pub mod service;
pub mod steps;
pub mod store;
pub mod tasks;
pub mod trust;

pub use again::register_jobs;
pub use error::{ErrorCode, QaError};
pub use plan::{RunStatus, StepResult, StepStatus, TestPlan, TestRun, TestStep};
pub use run::{run_plan, RunOptions};
pub use store::{QaStore, StoreError};

/// Makes this capability's model tasks known to the core by name (the history's "run again",
/// the status's list). The server and the CLI call it when they start.
pub fn register_tasks() {
    vaider_core::task::register(&tasks::ALL);
}
