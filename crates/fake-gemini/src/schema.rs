//! A small generic example generator for `responseJsonSchema` (JSON Schema) and
//! `responseSchema` (Gemini's OpenAPI subset): it builds one value that validates against the
//! schema, putting the "proof" sentence (media sizes and hashes) into every free string; and
//! [`fit`], which makes a scripted answer fit the schema the request sent, as a model's
//! constrained decoding does.

use serde_json::{Map, Value};

/// Nesting depth after which the generator gives up (recursive schemas).
const MAX_DEPTH: usize = 16;

/// Build a value valid against `schema`; `sentence` fills free-text strings.
pub fn example(schema: &Value, sentence: &str) -> Value {
    Gen {
        root: schema,
        sentence,
    }
    .value(schema, 0)
}

/// `value` made to fit `schema`: the properties the schema names (each fitted), the others
/// dropped; an enum value, a type or a length the schema does not allow replaced or cut; what
/// is missing filled as [`example`] fills it.
pub fn fit(schema: &Value, value: &Value, sentence: &str) -> Value {
    Gen {
        root: schema,
        sentence,
    }
    .fit(schema, value, 0)
}

struct Gen<'a> {
    root: &'a Value,
    sentence: &'a str,
}

impl Gen<'_> {
    fn fit(&self, schema: &Value, value: &Value, depth: usize) -> Value {
        let Value::Object(obj) = schema else {
            return value.clone();
        };
        if depth > MAX_DEPTH || value.is_null() {
            return self.value(schema, depth);
        }
        if let Some(Value::String(r)) = obj.get("$ref") {
            return match self.resolve(r) {
                Some(target) => self.fit(target, value, depth + 1),
                None => value.clone(),
            };
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            return match values.contains(value) {
                true => value.clone(),
                false => self.value(schema, depth),
            };
        }
        let fits = match (type_of(obj).as_deref(), value) {
            (Some("object"), Value::Object(given)) => {
                return self.fit_object(obj, given, depth);
            }
            (Some("array"), Value::Array(items)) => return self.fit_array(obj, items, depth),
            (Some("string"), Value::String(text)) => {
                let max = uint(obj.get("maxLength")).unwrap_or(u64::MAX) as usize;
                return Value::String(text.chars().take(max).collect());
            }
            (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
            (Some("number"), Value::Number(_)) | (Some("boolean"), Value::Bool(_)) => true,
            // anyOf, allOf and the like: taken as they come.
            (None, _) => true,
            _ => false,
        };
        match fits {
            true => value.clone(),
            false => self.value(schema, depth),
        }
    }

    fn fit_object(
        &self,
        obj: &Map<String, Value>,
        given: &Map<String, Value>,
        depth: usize,
    ) -> Value {
        let mut out = Map::new();
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, sub) in props {
                let value = match given.get(name) {
                    Some(v) => self.fit(sub, v, depth + 1),
                    None => self.value(sub, depth + 1),
                };
                out.insert(name.clone(), value);
            }
        }
        if let Some(Value::Array(required)) = obj.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !out.contains_key(name) {
                    let value = given
                        .get(name)
                        .cloned()
                        .unwrap_or_else(|| Value::String(self.sentence.to_string()));
                    out.insert(name.to_string(), value);
                }
            }
        }
        Value::Object(out)
    }

    fn fit_array(&self, obj: &Map<String, Value>, items: &[Value], depth: usize) -> Value {
        let max = uint(obj.get("maxItems")).unwrap_or(u64::MAX) as usize;
        let min = uint(obj.get("minItems")).unwrap_or(0) as usize;
        let item = obj.get("items").unwrap_or(&Value::Bool(true));
        let mut out: Vec<Value> = items
            .iter()
            .take(max)
            .map(|v| self.fit(item, v, depth + 1))
            .collect();
        while out.len() < min {
            out.push(self.value(item, depth + 1));
        }
        Value::Array(out)
    }

    fn value(&self, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        let obj = match schema {
            Value::Object(o) => o,
            // `true` or an unknown shape accepts anything.
            _ => return Value::String(self.sentence.to_string()),
        };
        if let Some(Value::String(r)) = obj.get("$ref") {
            return match self.resolve(r) {
                Some(target) => self.value(target, depth + 1),
                None => Value::String(self.sentence.to_string()),
            };
        }
        if let Some(c) = obj.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            if let Some(first) = values.iter().find(|v| !v.is_null()).or(values.first()) {
                return first.clone();
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                let pick = branches
                    .iter()
                    .find(|b| !is_null_schema(b))
                    .or(branches.first());
                if let Some(branch) = pick {
                    return self.value(&merge_siblings(obj, branch, key), depth + 1);
                }
            }
        }
        if let Some(Value::Array(parts)) = obj.get("allOf") {
            let mut merged = obj.clone();
            merged.remove("allOf");
            for part in parts {
                let part = match part.get("$ref").and_then(Value::as_str) {
                    Some(r) => self.resolve(r).unwrap_or(part),
                    None => part,
                };
                if let Value::Object(p) = part {
                    merge_into(&mut merged, p);
                }
            }
            return self.value(&Value::Object(merged), depth + 1);
        }
        match type_of(obj).as_deref() {
            Some("object") => self.object(obj, depth),
            Some("array") => self.array(obj, depth),
            Some("string") => self.string(obj),
            Some("integer") => integer(obj),
            Some("number") => number(obj),
            Some("boolean") => Value::Bool(true),
            Some("null") => Value::Null,
            _ => Value::String(self.sentence.to_string()),
        }
    }

    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(pointer)
    }

    fn object(&self, obj: &Map<String, Value>, depth: usize) -> Value {
        let mut out = Map::new();
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, sub) in props {
                out.insert(name.clone(), self.value(sub, depth + 1));
            }
        }
        if let Some(Value::Array(required)) = obj.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !out.contains_key(name) {
                    let value = match obj.get("additionalProperties") {
                        Some(sub @ Value::Object(_)) => self.value(sub, depth + 1),
                        _ => Value::String(self.sentence.to_string()),
                    };
                    out.insert(name.to_string(), value);
                }
            }
        }
        Value::Object(out)
    }

    fn array(&self, obj: &Map<String, Value>, depth: usize) -> Value {
        let min = uint(obj.get("minItems")).unwrap_or(0);
        let max = uint(obj.get("maxItems"));
        let mut count = min.max(1);
        if let Some(max) = max {
            count = count.min(max);
        }
        let prefix: Vec<&Value> = match obj.get("prefixItems") {
            Some(Value::Array(p)) => p.iter().collect(),
            _ => Vec::new(),
        };
        let count = count.max(prefix.len() as u64);
        let items = obj.get("items");
        (0..count as usize)
            .map(|i| match (prefix.get(i), items) {
                (Some(p), _) => self.value(p, depth + 1),
                (None, Some(sub)) => self.value(sub, depth + 1),
                (None, None) => Value::String(self.sentence.to_string()),
            })
            .collect::<Vec<_>>()
            .into()
    }

    fn string(&self, obj: &Map<String, Value>) -> Value {
        let format = obj.get("format").and_then(Value::as_str).unwrap_or("");
        let mut s = match format {
            "date-time" => chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "date" => chrono::Utc::now().format("%Y-%m-%d").to_string(),
            "time" => "12:00:00Z".to_string(),
            "email" => "tester@example.com".to_string(),
            "uri" | "url" | "iri" => "https://example.com/".to_string(),
            "uuid" => "123e4567-e89b-42d3-a456-426614174000".to_string(),
            "duration" => "PT5S".to_string(),
            "ipv4" => "127.0.0.1".to_string(),
            "ipv6" => "::1".to_string(),
            "hostname" => "example.com".to_string(),
            _ => self.sentence.to_string(),
        };
        let len = s.chars().count() as u64;
        if let Some(max) = uint(obj.get("maxLength")) {
            if len > max {
                s = s.chars().take(max as usize).collect();
            }
        }
        if let Some(min) = uint(obj.get("minLength")) {
            while (s.chars().count() as u64) < min {
                s.push('.');
            }
        }
        Value::String(s)
    }
}

/// The schema's type, lower-cased; the first non-null one of a type list; inferred if absent.
fn type_of(obj: &Map<String, Value>) -> Option<String> {
    match obj.get("type") {
        Some(Value::String(t)) => Some(t.to_ascii_lowercase()),
        Some(Value::Array(ts)) => {
            let names: Vec<String> = ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_ascii_lowercase)
                .collect();
            names
                .iter()
                .find(|t| t.as_str() != "null")
                .or(names.first())
                .cloned()
        }
        _ => {
            if obj.contains_key("properties") || obj.contains_key("required") {
                Some("object".into())
            } else if obj.contains_key("items") || obj.contains_key("prefixItems") {
                Some("array".into())
            } else {
                None
            }
        }
    }
}

fn is_null_schema(v: &Value) -> bool {
    matches!(v.get("type").and_then(Value::as_str), Some(t) if t.eq_ignore_ascii_case("null"))
}

/// A branch of anyOf/oneOf, with the keywords written beside the anyOf (e.g. `description`).
fn merge_siblings(parent: &Map<String, Value>, branch: &Value, key: &str) -> Value {
    match branch {
        Value::Object(b) => {
            let mut merged = parent.clone();
            merged.remove(key);
            merged.remove("type");
            for (k, v) in b {
                merged.insert(k.clone(), v.clone());
            }
            Value::Object(merged)
        }
        other => other.clone(),
    }
}

fn merge_into(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match (k.as_str(), into.get_mut(k), v) {
            ("properties", Some(Value::Object(a)), Value::Object(b)) => {
                for (pk, pv) in b {
                    a.insert(pk.clone(), pv.clone());
                }
            }
            ("required", Some(Value::Array(a)), Value::Array(b)) => {
                for r in b {
                    if !a.contains(r) {
                        a.push(r.clone());
                    }
                }
            }
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

fn uint(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        // Gemini's OpenAPI schema writes int64 limits as strings ("minItems": "1").
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn float(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// 1, moved inside [minimum, maximum] (and the exclusive bounds) when needed.
fn bounded(obj: &Map<String, Value>, integer: bool) -> f64 {
    let step = if integer { 1.0 } else { 0.5 };
    let mut v = 1.0f64;
    if let Some(min) = float(obj.get("minimum")) {
        v = v.max(if integer { min.ceil() } else { min });
    }
    if let Some(min) = float(obj.get("exclusiveMinimum")) {
        if v <= min {
            v = if integer {
                min.floor() + 1.0
            } else {
                min + step
            };
        }
    }
    if let Some(max) = float(obj.get("maximum")) {
        v = v.min(if integer { max.floor() } else { max });
    }
    if let Some(max) = float(obj.get("exclusiveMaximum")) {
        if v >= max {
            v = if integer {
                max.ceil() - 1.0
            } else {
                max - step
            };
        }
    }
    v
}

fn integer(obj: &Map<String, Value>) -> Value {
    Value::from(bounded(obj, true) as i64)
}

fn number(obj: &Map<String, Value>) -> Value {
    let v = bounded(obj, false);
    if v.fract() == 0.0 && v.abs() < 1e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_schema_with_refs_and_options() {
        let schema = json!({
            "type": "object",
            "properties": {
                "summary": {"type": "string"},
                "passed": {"type": "boolean"},
                "count": {"type": "integer", "minimum": 3},
                "score": {"type": ["number", "null"], "maximum": 0.5},
                "verdict": {"enum": ["pass", "fail"]},
                "steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}, "minItems": 2},
                "note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 5}]}
            },
            "required": ["summary", "passed", "extra"],
            "$defs": {"Step": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}, "required": ["at"]}}
        });
        let v = example(&schema, "proof sentence");
        assert_eq!(v["summary"], "proof sentence");
        assert_eq!(v["passed"], true);
        assert_eq!(v["count"], 3);
        assert_eq!(v["score"], 0.5);
        assert_eq!(v["verdict"], "pass");
        assert_eq!(v["steps"].as_array().map(Vec::len), Some(2));
        assert!(v["steps"][0]["at"]
            .as_str()
            .is_some_and(|s| s.ends_with('Z')));
        assert_eq!(v["note"], "proof");
        assert_eq!(v["extra"], "proof sentence");
    }

    #[test]
    fn an_answer_is_fitted_to_the_schema_sent() {
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["click", "done"]},
                "ref": {"type": "string", "maxLength": 3},
                "passed": {"type": "boolean"},
                "steps": {"type": "array", "maxItems": 1, "items": {"type": "object", "properties": {"id": {"type": "string"}}}}
            },
            "required": ["action"]
        });
        let answer = json!({"action": "give_up", "ref": "12345", "passed": "yes", "extra": 1,
            "steps": [{"id": "a", "other": 2}, {"id": "b"}]});
        assert_eq!(
            fit(&schema, &answer, "s"),
            json!({"action": "click", "ref": "123", "passed": true, "steps": [{"id": "a"}]})
        );
    }

    #[test]
    fn openapi_schema_uppercase_types() {
        let schema = json!({
            "type": "OBJECT",
            "properties": {"items": {"type": "ARRAY", "items": {"type": "NUMBER"}}, "ok": {"type": "BOOLEAN"}},
            "propertyOrdering": ["items", "ok"]
        });
        let v = example(&schema, "s");
        assert_eq!(v, json!({"items": [1], "ok": true}));
    }
}
