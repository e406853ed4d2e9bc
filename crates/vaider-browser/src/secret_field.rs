//! Whether a field may receive a plan's secret value: a password field always, any other
//! field only when it matches one of the selectors the user granted the secret. A plain text
//! box shows its value on the page, in the next snapshot the model reads and in every
//! screenshot, so a secret typed there would leak.

use std::time::Duration;

use crate::cdp;
use crate::tab::{StepError, Tab};

impl Tab {
    /// Whether the element `selector` (waited for, visible) is a password field or matches one
    /// of `granted` (CSS selectors; one the page cannot parse matches nothing).
    pub async fn accepts_secret(
        &self,
        selector: &str,
        granted: &[String],
        timeout: Duration,
    ) -> Result<bool, StepError> {
        let element = self.wait_for(selector, true, timeout).await?;
        let granted = serde_json::to_string(granted).unwrap_or_else(|_| "[]".into());
        let function = format!(
            "function() {{ if (this.type === 'password') {{ return true; }} \
             return {granted}.some(s => {{ try {{ return this.matches(s); }} catch (e) {{ return false; }} }}); }}"
        );
        let answer = element
            .call_js_fn(function, false)
            .await
            .map_err(cdp("checking the field"))?;
        Ok(answer.result.value.and_then(|v| v.as_bool()) == Some(true))
    }

    /// [`Tab::accepts_secret`] for the element numbered `reference` by the latest snapshot.
    pub async fn ref_accepts_secret(
        &self,
        reference: u32,
        granted: &[String],
    ) -> Result<bool, StepError> {
        let selector = crate::snapshot::ref_selector(reference);
        self.accepts_secret(&selector, granted, Duration::ZERO)
            .await
    }
}
