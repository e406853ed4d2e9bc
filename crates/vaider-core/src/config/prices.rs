//! What a model costs: the built-in prices per million tokens, the config's own, and the
//! price of a versioned or Bedrock model id (its base model's).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;

/// USD per million tokens, input and output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

/// Late-2026 list prices (https://ai.google.dev/gemini-api/docs/pricing and the other
/// providers' price lists); users update them in the config file.
pub fn default_prices() -> BTreeMap<String, Price> {
    [
        ("gemini-2.5-flash-lite", 0.10, 0.40),
        ("gemini-3.5-flash", 1.50, 9.00),
        ("gemini-3.5-flash-lite", 0.30, 2.50),
        ("gpt-4.1-mini", 0.40, 1.60),
        ("gpt-4.1", 2.00, 8.00),
        ("glm-4.6v", 0.30, 0.90),
        ("claude-sonnet-4-5", 3.00, 15.00),
        ("claude-haiku-4-5", 1.00, 5.00),
        // Bedrock ids are priced by the model after their prefixes (see `price_of`).
        ("claude-3-5-sonnet", 3.00, 15.00),
        ("claude-3-7-sonnet", 3.00, 15.00),
        ("claude-sonnet-4", 3.00, 15.00),
        ("claude-3-haiku", 0.25, 1.25),
        ("nova-pro", 0.80, 3.20),
        ("nova-lite", 0.06, 0.24),
    ]
    .into_iter()
    .map(|(model, input, output)| {
        (
            model.to_string(),
            Price {
                input_per_million: input,
                output_per_million: output,
            },
        )
    })
    .collect()
}

impl Config {
    pub fn price_of(&self, model: &str) -> Option<Price> {
        // "models/gemini-3.5-flash" and "gemini-3.5-flash-001" are priced as the base model.
        let model = model.strip_prefix("models/").unwrap_or(model);
        self.price_by_prefix(model).or_else(|| {
            // Bedrock: "us.anthropic.claude-sonnet-4-5-...-v1:0" is priced as claude-sonnet-4-5
            // unless the config prices the full id.
            let base = bedrock_base_model(model);
            (base != model)
                .then(|| self.price_by_prefix(base))
                .flatten()
        })
    }

    fn price_by_prefix(&self, model: &str) -> Option<Price> {
        self.prices.get(model).copied().or_else(|| {
            self.prices
                .iter()
                .filter(|(name, _)| model.starts_with(name.as_str()))
                .max_by_key(|(name, _)| name.len())
                .map(|(_, price)| *price)
        })
    }
}

/// A Bedrock model id without its cross-region inference prefix ("us.", "eu.", "apac.",
/// "global.") and vendor ("anthropic.", "amazon.", "meta."): the name prices are kept by.
pub fn bedrock_base_model(model: &str) -> &str {
    let mut rest = model;
    for prefix in [
        "us.", "us-gov.", "eu.", "apac.", "jp.", "au.", "ca.", "global.",
    ] {
        if let Some(r) = rest.strip_prefix(prefix) {
            rest = r;
            break;
        }
    }
    const VENDORS: [&str; 9] = [
        "anthropic",
        "amazon",
        "meta",
        "mistral",
        "cohere",
        "ai21",
        "deepseek",
        "writer",
        "qwen",
    ];
    match rest.split_once('.') {
        Some((vendor, model)) if VENDORS.contains(&vendor) && !model.is_empty() => model,
        _ => rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_model_names_use_the_base_price() {
        let config = Config::default();
        let flash = config.price_of("gemini-3.5-flash-001").unwrap();
        assert_eq!(flash.input_per_million, 1.50);
        let lite = config.price_of("models/gemini-2.5-flash-lite").unwrap();
        assert_eq!(lite.input_per_million, 0.10);
        assert!(config.price_of("gpt-4o").is_none());
    }

    #[test]
    fn bedrock_model_ids_are_priced_as_their_base_model() {
        let config = Config::default();
        let sonnet = config
            .price_of("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
            .unwrap();
        assert_eq!(sonnet.input_per_million, 3.00);
        let old = config
            .price_of("anthropic.claude-3-5-sonnet-20241022-v2:0")
            .unwrap();
        assert_eq!(old.output_per_million, 15.00);
        assert_eq!(
            config
                .price_of("amazon.nova-lite-v1:0")
                .unwrap()
                .input_per_million,
            0.06
        );
        assert_eq!(bedrock_base_model("gemini-3.5-flash"), "gemini-3.5-flash");
        assert_eq!(
            bedrock_base_model("Qwen/Qwen2.5-VL-7B-Instruct"),
            "Qwen/Qwen2.5-VL-7B-Instruct"
        );
        assert!(config.price_of("meta.llama-unknown").is_none());
    }
}
