//! JSON Schemas of the tools' inputs and outputs, generated from their types by `utoipa`: the
//! outputs are the OpenAPI document's schemas (so a tool and its REST route answer the same
//! shape), request bodies inside inputs are the REST request types; component references
//! become `$defs` of one self-contained schema.

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

/// The input schema of a tool from its input type: an object that lists its properties, even
/// none (some clients read `properties` unconditionally).
pub fn input<T: ToSchema>() -> Value {
    let mut root = of::<T>();
    if let Value::Object(obj) = &mut root {
        obj.entry("properties").or_insert_with(|| json!({}));
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
