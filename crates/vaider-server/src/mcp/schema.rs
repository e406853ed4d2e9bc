//! Tool schemas in standard JSON Schema 2020-12. schemars writes Rust's number types as
//! formats (`uint64`, `uint`, `double`) that no validator knows; clients such as Claude Code
//! warn about each. Here they become plain `integer` / `number`, unsigned ones with `minimum: 0`.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::JsonObject;
use serde_json::Value;

/// The formats JSON Schema 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose values are data, not schemas: a `format` inside them is left alone.
const DATA_KEYWORDS: &[&str] = &["default", "examples", "const", "enum"];

/// Rewrites every tool's input and output schema in `router`, in one place for all tools.
pub(super) fn standard_schemas<S>(mut router: ToolRouter<S>) -> ToolRouter<S> {
    for route in router.map.values_mut() {
        let tool = &mut route.attr;
        tool.input_schema = standard(&tool.input_schema);
        if let Some(output) = &tool.output_schema {
            tool.output_schema = Some(standard(output));
        }
    }
    router
}

fn standard(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    let mut schema = JsonObject::clone(schema);
    make_standard(&mut schema);
    Arc::new(schema)
}

fn make_standard(schema: &mut JsonObject) {
    let non_standard = match schema.get("format") {
        Some(Value::String(format)) if !STANDARD_FORMATS.contains(&format.as_str()) => {
            Some(format.starts_with("uint"))
        }
        _ => None,
    };
    if let Some(unsigned) = non_standard {
        schema.remove("format");
        if unsigned && !schema.contains_key("minimum") && !schema.contains_key("exclusiveMinimum") {
            schema.insert("minimum".into(), Value::from(0));
        }
    }
    for (keyword, value) in schema.iter_mut() {
        if DATA_KEYWORDS.contains(&keyword.as_str()) {
            continue;
        }
        match value {
            Value::Object(inner) => make_standard(inner),
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(make_standard),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn standardised(schema: Value) -> Value {
        let Value::Object(object) = schema else {
            return Value::Null;
        };
        Value::Object(JsonObject::clone(&standard(&Arc::new(object))))
    }

    #[test]
    fn rust_number_formats_become_plain_types_and_others_stay() {
        let schema = json!({
            "type": "object",
            "properties": {
                "timeout_sec": {"type": "integer", "format": "uint64", "minimum": 0},
                "count": {"type": ["integer", "null"], "format": "uint"},
                "cost": {"type": "number", "format": "double"},
                "offset": {"type": "integer", "format": "int64"},
                "when": {"type": "string", "format": "date-time"},
                "format": {"type": "string", "default": {"format": "uint64"}}
            },
            "$defs": {"Usage": {"anyOf": [{"type": "integer", "format": "uint32"}]}}
        });
        let out = standardised(schema);
        let p = &out["properties"];
        assert_eq!(p["timeout_sec"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(
            p["count"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(p["cost"], json!({"type": "number"}));
        assert_eq!(p["offset"], json!({"type": "integer"}));
        assert_eq!(p["when"]["format"], "date-time");
        assert_eq!(p["format"]["default"], json!({"format": "uint64"}));
        assert_eq!(
            out["$defs"]["Usage"]["anyOf"][0],
            json!({"type": "integer", "minimum": 0})
        );
    }
}
