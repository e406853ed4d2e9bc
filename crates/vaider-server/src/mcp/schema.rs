//! Tool schemas in standard JSON Schema 2020-12 that every client takes. schemars writes Rust's
//! number types as formats (`uint64`, `uint`, `double`) that no validator knows; clients such as
//! Claude Code warn about each. Here they become plain `integer` / `number`, unsigned ones with
//! `minimum: 0`. An optional argument is written `"type": ["string", "null"]`, which
//! Gemini-based clients refuse; every optional argument may simply be left out, so its input
//! schema says just `"type": "string"` (the server still takes a `null`). Every output schema
//! also lists `summary`, the result's sentences (see `answer`).

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
        let mut input = standard(&tool.input_schema);
        without_null_types(&mut input);
        tool.input_schema = Arc::new(input);
        if let Some(output) = &tool.output_schema {
            let mut output = standard(output);
            with_summary(&mut output);
            tool.output_schema = Some(Arc::new(output));
        }
    }
    router
}

fn standard(schema: &Arc<JsonObject>) -> JsonObject {
    let mut schema = JsonObject::clone(schema);
    make_standard(&mut schema);
    schema
}

/// `"type": ["X", "null"]` becomes `"type": "X"` in an input schema, at any depth, and a
/// `"default": null` goes (leaving the argument out is the default).
fn without_null_types(schema: &mut JsonObject) {
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    if let Some(Value::Array(types)) = schema.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kept.len() == 1 && kept.len() < types.len() {
            schema.insert("type".into(), kept[0].clone());
        }
    }
    for (keyword, value) in schema.iter_mut() {
        if DATA_KEYWORDS.contains(&keyword.as_str()) {
            continue;
        }
        match value {
            Value::Object(inner) => without_null_types(inner),
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(without_null_types),
            _ => {}
        }
    }
}

/// Adds `summary` (the result's sentences, see `answer`) to an object output schema.
fn with_summary(schema: &mut JsonObject) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    properties.insert(
        super::answer::SUMMARY.into(),
        serde_json::json!({"type": "string", "description": "The result in sentences, as in the text block."}),
    );
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
        Value::Object(standard(&Arc::new(object)))
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

    #[test]
    fn optional_arguments_are_plain_types_and_outputs_list_summary() {
        let Value::Object(mut input) = json!({
            "type": "object",
            "properties": {
                "cwd": {"type": ["string", "null"]},
                "headless": {"type": ["boolean", "null"], "default": null},
                "either": {"type": ["string", "integer"]},
                "default": {"type": "string", "default": {"type": ["a", "null"]}}
            }
        }) else {
            unreachable!()
        };
        without_null_types(&mut input);
        let p = &input["properties"];
        assert_eq!(p["cwd"], json!({"type": "string"}));
        assert_eq!(p["headless"], json!({"type": "boolean"}));
        assert_eq!(p["either"]["type"], json!(["string", "integer"]));
        assert_eq!(p["default"]["default"], json!({"type": ["a", "null"]}));

        let Value::Object(mut output) = json!({"type": "object", "properties": {"a": {}}}) else {
            unreachable!()
        };
        with_summary(&mut output);
        assert_eq!(output["properties"]["summary"]["type"], "string");
    }
}
