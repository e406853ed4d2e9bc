//! QA test plans, as the agents' design has them (contracts.md §3): a plan is steps written
//! from plain-English requirements; a run performs them in a real local browser, stops at the
//! first failure and keeps evidence for every step. This crate holds the plan and run shapes
//! (`plan`), their files in the project's `.qa-agent/` folder (`store`), and the browser steps
//! (`steps`, the model's judgement in `judge`, its browsing loop in `browse`) a run (`run`)
//! performs.

pub mod browse;
pub mod check;
pub mod context;
pub mod error;
pub mod generate;
pub mod judge;
pub mod plan;
pub mod run;
pub mod secret_values;
pub mod service;
pub mod steps;
pub mod store;

pub use error::{ErrorCode, QaError};
pub use plan::{RunStatus, StepResult, StepStatus, TestPlan, TestRun, TestStep};
pub use run::{run_plan, RunOptions};
pub use store::{QaStore, StoreError};
