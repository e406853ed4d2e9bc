//! What a call cost: tokens from the provider's usage report times the price table in the
//! config (USD per million tokens).

use crate::analysis::Usage;
use crate::config::Config;

/// The cost in USD, rounded to a millionth of a dollar; 0 for a model missing from the table.
pub fn cost_usd(config: &Config, model: &str, usage: Usage) -> f64 {
    let Some(price) = config.price_of(model) else {
        tracing::warn!(
            model,
            "no price for this model in the config; cost reported as 0"
        );
        return 0.0;
    };
    let cost = usage.input_tokens as f64 * price.input_per_million / 1e6
        + usage.output_tokens as f64 * price.output_per_million / 1e6;
    (cost * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_tokens_times_price() {
        let config = Config::default();
        // gemini-3.5-flash-lite: 0.30 in, 2.50 out per million.
        let usage = Usage {
            input_tokens: 1_650,
            output_tokens: 400,
            ..Default::default()
        };
        let expected = 1_650.0 * 0.30 / 1e6 + 400.0 * 2.50 / 1e6;
        assert!((cost_usd(&config, "gemini-3.5-flash-lite", usage) - expected).abs() < 1e-9);
        assert_eq!(cost_usd(&config, "unknown-model", usage), 0.0);
    }
}
