//! The errors of the QA tools, as contracts.md §3 names them: `{error: {code, message,
//! details?}}`. Every door reports these codes unchanged, so an agent can branch on the code
//! and show the message, which always says what to do.

use serde::Serialize;
use serde_json::Value;

use crate::store::StoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    PlanNotFound,
    RunNotFound,
    InvalidInput,
    BrowserError,
    ModelError,
    StorageError,
    ExecutionFailed,
    /// A plan file Vaider did not write, whose address, hosts or secrets no person approved.
    PlanNotApproved,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::PlanNotFound => "PLAN_NOT_FOUND",
            ErrorCode::RunNotFound => "RUN_NOT_FOUND",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::BrowserError => "BROWSER_ERROR",
            ErrorCode::ModelError => "MODEL_ERROR",
            ErrorCode::StorageError => "STORAGE_ERROR",
            ErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ErrorCode::PlanNotApproved => "PLAN_NOT_APPROVED",
        }
    }
}

/// One QA error: the body of `{error: …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QaError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl QaError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> QaError {
        QaError {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> QaError {
        QaError::new(ErrorCode::InvalidInput, message)
    }

    pub fn with_details(mut self, details: Value) -> QaError {
        self.details = Some(details);
        self
    }

    /// The whole answer: `{"error": {code, message, details?}}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "error": self })
    }
}

impl std::fmt::Display for QaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for QaError {}

impl From<StoreError> for QaError {
    fn from(error: StoreError) -> QaError {
        let code = match &error {
            StoreError::PlanNotFound(_) => ErrorCode::PlanNotFound,
            StoreError::RunNotFound(_) => ErrorCode::RunNotFound,
            StoreError::BadId(_) => ErrorCode::InvalidInput,
            StoreError::Write { .. } | StoreError::Unreadable { .. } => ErrorCode::StorageError,
        };
        QaError::new(code, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_serialises_as_the_contract_has_it() {
        let error = QaError::from(StoreError::PlanNotFound("p1".into()));
        let json = error.to_json();
        assert_eq!(json["error"]["code"], "PLAN_NOT_FOUND");
        assert!(json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("list_test_plans"));
        assert!(json["error"].get("details").is_none());
        let detailed =
            QaError::invalid("bad").with_details(serde_json::json!({"field": "baseUrl"}));
        assert_eq!(detailed.to_json()["error"]["details"]["field"], "baseUrl");
        assert_eq!(
            serde_json::to_value(ErrorCode::ExecutionFailed).unwrap(),
            ErrorCode::ExecutionFailed.as_str()
        );
    }
}
