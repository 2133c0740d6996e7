//! JSON Schemas of the tools' inputs and outputs. Outputs come from the same `utoipa` schemas as
//! the OpenAPI document (so a tool and its REST route answer the same shape); their component
//! references become `$defs` of one self-contained schema.

use serde_json::{Map, Value, json};
use utoipa::ToSchema;

/// A self-contained schema of `T`.
pub fn of<T: ToSchema>() -> Value {
    let mut defs = Vec::new();
    T::schemas(&mut defs);
    let mut root = serde_json::to_value(T::schema()).unwrap_or_else(|_| json!({}));
    if !defs.is_empty() {
        let map: Map<String, Value> = defs
            .into_iter()
            .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or(Value::Null)))
            .collect();
        if let Value::Object(obj) = &mut root {
            obj.insert("$defs".into(), Value::Object(map));
        }
    }
    rewrite_refs(&mut root);
    // MCP wants an object type at the root; a flattened struct is an `allOf` without one.
    if let Value::Object(obj) = &mut root
        && !obj.contains_key("type")
    {
        obj.insert("type".into(), Value::String("object".into()));
    }
    root
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/components/schemas/")
            {
                *r = format!("#/$defs/{name}");
            }
            for v in map.values_mut() {
                rewrite_refs(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// One property of an input object: its name, schema, and whether it is required.
pub type Property = (&'static str, Value, bool);

/// An object schema of `properties`; `$defs` of nested schemas move to the root, where their
/// references resolve.
pub fn object(properties: Vec<Property>) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    let mut defs = Map::new();
    for (name, mut schema, needed) in properties {
        if let Some(Value::Object(nested)) = schema.as_object_mut().and_then(|o| o.remove("$defs"))
        {
            defs.extend(nested);
        }
        props.insert(name.to_owned(), schema);
        if needed {
            required.push(Value::String(name.to_owned()));
        }
    }
    let mut root = json!({"type": "object", "properties": props, "additionalProperties": false});
    if !required.is_empty() {
        root["required"] = Value::Array(required);
    }
    if !defs.is_empty() {
        root["$defs"] = Value::Object(defs);
    }
    root
}

/// A string property.
pub fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// A string property with fixed values.
pub fn one_of(description: &str, values: &[&str]) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

/// An integer property with bounds.
pub fn integer(description: &str, min: u32, max: u32) -> Value {
    json!({"type": "integer", "minimum": min, "maximum": max, "description": description})
}

/// A boolean property.
pub fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

/// A UUID property.
pub fn uuid(description: &str) -> Value {
    json!({"type": "string", "format": "uuid", "description": description})
}

/// A list of strings.
pub fn strings(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

/// The `domain` property every per-domain tool takes.
pub fn domain() -> Value {
    string("The domain: its id (UUID) or its name (e.g. example.com)")
}

/// `page` and `per_page`.
pub fn paging() -> Vec<Property> {
    vec![
        ("page", integer("Page number, from 1", 1, 100_000), false),
        ("per_page", integer("Items per page", 1, 100), false),
    ]
}
