//! The rubric of contracts.md §2: what a run must show to pass, with the exact error and
//! warning texts agents already parse, plus Vaider's own criterion (each expectation the video
//! does not show).

use serde::{Deserialize, Serialize};

/// `data.validation_result`: what the run showed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidationResult {
    pub browser_launched: bool,
    pub test_executed: bool,
    pub test_passed: bool,
    /// Absolute paths, oldest first.
    pub screenshots: Vec<String>,
    /// Each at most 200 characters.
    pub console_errors: Vec<String>,
    /// Each at most 200 characters.
    pub network_failures: Vec<String>,
    /// The tests themselves, browser start excluded.
    pub execution_time_ms: u64,
}

/// `data.rubric_validation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RubricValidation {
    pub passed: bool,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// The limits an agent may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_test_duration_ms: u64,
    pub min_screenshots: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_test_duration_ms: 45_000,
            min_screenshots: 1,
        }
    }
}

/// What else the judge needs to know about the run and the video.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// The run was stopped at its timeout (seconds).
    pub timed_out_after_sec: Option<u64>,
    /// Expectations the video did not show (verdict not met).
    pub not_shown: Vec<String>,
    /// Expectations the model could not decide.
    pub unclear: Vec<String>,
    /// Why the video could not be checked, when expectations were given.
    pub video_problem: Option<String>,
    /// Playwright's verdict and its reasons ([`crate::verdict`]): the first errors.
    pub causes: Vec<String>,
    /// Playwright could not run the tests (config, dependency, recorder): no browser was
    /// started, so "Browser failed to launch" would point the wrong way.
    pub setup_failed: bool,
    /// What the rubric notes without failing: what the run did not record and why, and its
    /// screenshots now pending review.
    pub notes: Vec<String>,
}

/// Judges a run.
pub fn judge(result: &ValidationResult, limits: &Limits, extra: &Extra) -> RubricValidation {
    let errors = errors(result, limits, extra);
    RubricValidation {
        passed: errors.is_empty(),
        errors,
        warnings: warnings(result, extra),
    }
}

/// What fails the rubric: Playwright's verdict first, then the run, the limits and the video.
fn errors(result: &ValidationResult, limits: &Limits, extra: &Extra) -> Vec<String> {
    let mut errors = extra.causes.clone();
    if let Some(sec) = extra.timed_out_after_sec {
        errors.push(format!(
            "Test run exceeded the {sec}s timeout and was stopped"
        ));
    }
    if !result.browser_launched && !extra.setup_failed {
        errors.push("Browser failed to launch".to_string());
    }
    if !result.test_executed {
        errors.push("Test did not execute".to_string());
    }
    if !result.test_passed {
        errors.push("Test failed (test_passed=false)".to_string());
    }
    errors.extend(limit_errors(result, limits));
    for expectation in &extra.not_shown {
        errors.push(format!("Video does not show: {expectation}"));
    }
    if let Some(problem) = &extra.video_problem {
        errors.push(format!("Video not checked: {problem}"));
    }
    errors
}

/// Too few screenshots, or a run longer than allowed.
fn limit_errors(result: &ValidationResult, limits: &Limits) -> Vec<String> {
    let mut errors = Vec::new();
    // A test that did not run took no screenshots: that is not one more reason.
    let shots = result.screenshots.len();
    let short = result.test_executed && shots < limits.min_screenshots;
    if short && shots == 0 {
        errors.push("Schema validation error: [] should be non-empty at screenshots".to_string());
    } else if short {
        errors.push(format!(
            "Only {shots} screenshots captured (minimum {} required)",
            limits.min_screenshots
        ));
    }
    if result.execution_time_ms > limits.max_test_duration_ms {
        errors.push(format!(
            "Execution time {}ms exceeds {}ms limit",
            result.execution_time_ms, limits.max_test_duration_ms
        ));
    }
    errors
}

/// What the rubric notes without failing: console errors, network failures, what the video
/// left unclear, and notes on the recording.
fn warnings(result: &ValidationResult, extra: &Extra) -> Vec<String> {
    let mut warnings = Vec::new();
    if !result.console_errors.is_empty() {
        warnings.push(format!(
            "Console errors detected: {} errors",
            result.console_errors.len()
        ));
    }
    if !result.network_failures.is_empty() {
        warnings.push(format!(
            "Network failures detected: {} failures",
            result.network_failures.len()
        ));
    }
    for expectation in &extra.unclear {
        warnings.push(format!("Video unclear on: {expectation}"));
    }
    warnings.extend(extra.notes.iter().cloned());
    warnings
}

impl RubricValidation {
    /// The AgentResult's `error`: the errors joined with "; ", or none.
    pub fn error(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| self.errors.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passing() -> ValidationResult {
        ValidationResult {
            browser_launched: true,
            test_executed: true,
            test_passed: true,
            screenshots: vec!["/a.png".into()],
            execution_time_ms: 1200,
            ..ValidationResult::default()
        }
    }

    #[test]
    fn a_good_run_passes_and_warnings_never_fail() {
        let mut result = passing();
        result.console_errors = vec!["a".into(), "b".into()];
        result.network_failures = vec!["net::ERR_FAILED".into()];
        let rubric = judge(&result, &Limits::default(), &Extra::default());
        assert!(rubric.passed);
        assert_eq!(
            rubric.warnings,
            [
                "Console errors detected: 2 errors",
                "Network failures detected: 1 failures"
            ]
        );
        assert_eq!(rubric.error(), None);
    }

    #[test]
    fn every_criterion_has_its_exact_text() {
        let result = ValidationResult {
            execution_time_ms: 50_000,
            ..ValidationResult::default()
        };
        let extra = Extra {
            not_shown: vec!["the dashboard".into()],
            ..Extra::default()
        };
        let rubric = judge(&result, &Limits::default(), &extra);
        assert!(!rubric.passed);
        assert_eq!(
            rubric.errors,
            [
                "Browser failed to launch",
                "Test did not execute",
                "Test failed (test_passed=false)",
                "Execution time 50000ms exceeds 45000ms limit",
                "Video does not show: the dashboard",
            ]
        );
        assert_eq!(rubric.error().unwrap(), rubric.errors.join("; "));
    }

    #[test]
    fn playwrights_verdict_comes_first_and_a_setup_failure_is_no_launch_failure() {
        let extra = Extra {
            causes: vec!["Playwright could not run the tests: SyntaxError".into()],
            setup_failed: true,
            ..Extra::default()
        };
        let rubric = judge(&ValidationResult::default(), &Limits::default(), &extra);
        assert_eq!(
            rubric.errors,
            [
                "Playwright could not run the tests: SyntaxError",
                "Test did not execute",
                "Test failed (test_passed=false)",
            ]
        );
        let mut ran = passing();
        ran.screenshots.clear();
        let rubric = judge(&ran, &Limits::default(), &Extra::default());
        assert_eq!(
            rubric.errors,
            ["Schema validation error: [] should be non-empty at screenshots"]
        );
    }

    #[test]
    fn the_limits_are_the_agents() {
        let limits = Limits {
            max_test_duration_ms: 1000,
            min_screenshots: 2,
        };
        let rubric = judge(&passing(), &limits, &Extra::default());
        assert_eq!(
            rubric.errors,
            [
                "Only 1 screenshots captured (minimum 2 required)",
                "Execution time 1200ms exceeds 1000ms limit"
            ]
        );
        let none = Limits {
            min_screenshots: 0,
            ..limits
        };
        let mut result = passing();
        result.screenshots.clear();
        result.execution_time_ms = 10;
        assert!(judge(&result, &none, &Extra::default()).passed);
    }
}
