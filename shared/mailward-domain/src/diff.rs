//! `previous_attributes` of change events (SPEC §6.2): the old values of what changed.

use serde_json::Value;

/// The old values of the top-level fields that differ between two JSON objects, `updated_at`
/// aside (it changes with every write); `None` when nothing else changed.
pub fn previous_attributes(old: &Value, new: &Value) -> Option<Value> {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return None;
    };
    let changed: serde_json::Map<String, Value> = old
        .iter()
        .filter(|(k, v)| k.as_str() != "updated_at" && new.get(k.as_str()) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!changed.is_empty()).then_some(Value::Object(changed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn previous_attributes_lists_old_values_of_changed_fields() {
        let old = json!({"name": "A", "is_active": true, "updated_at": "x"});
        let new = json!({"name": "B", "is_active": true, "updated_at": "y"});
        assert_eq!(previous_attributes(&old, &new), Some(json!({"name": "A"})));
        assert_eq!(previous_attributes(&old, &old), None);
    }
}
