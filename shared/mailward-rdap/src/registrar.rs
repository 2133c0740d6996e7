//! The registrar in an RDAP domain answer (RFC 9083 §5.3): among the domain's own `entities`
//! (not the entities nested in them, such as the registrar's abuse contact), the first with the
//! role `registrar` (§10.2.4). Its name is the jCard `fn` property of its `vcardArray`
//! (RFC 7095 §3.3: `["vcard", [[name, params, type, value…], …]]`); without one, its public id
//! (`IANA Registrar ID 292`) or its handle.

use serde_json::Value;

/// Longest registrar name kept (names are a few tens of characters; a hostile answer may send
/// a megabyte).
pub const MAX_NAME_CHARS: usize = 200;

/// The registrar named in a domain answer: `Ok(None)` when the answer is a domain object with
/// no registrar entity (some registries publish none). `Err` when the body is not a domain
/// object (not JSON, an error document, another class of object).
pub fn registrar_of(body: &[u8]) -> Result<Option<String>, String> {
    let answer: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let class = answer.get("objectClassName").and_then(Value::as_str);
    if !class.is_some_and(|c| c.eq_ignore_ascii_case("domain")) {
        return Err(match answer.get("errorCode") {
            Some(code) => format!("an RDAP error document (errorCode {code})"),
            None => "not an RDAP domain object".to_owned(),
        });
    }
    Ok(entities(&answer)
        .filter(|e| has_role(e, "registrar"))
        .find_map(entity_name))
}

fn entities(object: &Value) -> impl Iterator<Item = &Value> {
    object
        .get("entities")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
}

fn has_role(entity: &Value, role: &str) -> bool {
    entity
        .get("roles")
        .and_then(Value::as_array)
        .is_some_and(|roles| {
            roles
                .iter()
                .filter_map(Value::as_str)
                .any(|r| r.trim().eq_ignore_ascii_case(role))
        })
}

/// An entity's display name: its jCard `fn`, else a public id, else its handle.
fn entity_name(entity: &Value) -> Option<String> {
    entity
        .get("vcardArray")
        .and_then(jcard_fn)
        .or_else(|| public_id(entity))
        .or_else(|| entity.get("handle").and_then(Value::as_str).and_then(clean))
}

/// The first non-empty `fn` property of a jCard (property names compare without case).
pub fn jcard_fn(vcard: &Value) -> Option<String> {
    let [kind, properties] = vcard.as_array()?.get(..2)? else {
        return None;
    };
    if !kind
        .as_str()
        .is_some_and(|k| k.eq_ignore_ascii_case("vcard"))
    {
        return None;
    }
    properties.as_array()?.iter().find_map(|property| {
        let parts = property.as_array()?;
        let name = parts.first()?.as_str()?;
        if !name.eq_ignore_ascii_case("fn") {
            return None;
        }
        // [name, parameters, value type, value…]: a text value, or (leniently) the text
        // components of a structured one.
        let mut text = Vec::new();
        for value in parts.get(3..)? {
            collect_text(value, &mut text);
        }
        clean(&text.join(" "))
    })
}

fn collect_text<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_text(v, out)),
        _ => {}
    }
}

/// `<type> <identifier>` of the first public id (RFC 9083 §4.8), or the identifier alone.
fn public_id(entity: &Value) -> Option<String> {
    entity.get("publicIds")?.as_array()?.iter().find_map(|id| {
        let identifier = id.get("identifier")?.as_str()?.trim();
        if identifier.is_empty() {
            return None;
        }
        match id.get("type").and_then(Value::as_str).map(str::trim) {
            Some(kind) if !kind.is_empty() => clean(&format!("{kind} {identifier}")),
            _ => clean(identifier),
        }
    })
}

/// A name as stored: control characters dropped, white space collapsed, at most
/// [`MAX_NAME_CHARS`]; `None` when nothing is left.
fn clean(raw: &str) -> Option<String> {
    let words: Vec<&str> = raw
        .split(|c: char| c.is_whitespace() || c.is_control())
        .collect();
    let joined: String = words
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    let trimmed = joined.trim_end();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vcard(name: &str) -> Value {
        json!(["vcard", [
            ["version", {}, "text", "4.0"],
            ["fn", {}, "text", name],
            ["tel", {"type": "voice"}, "uri", "tel:+1.5555550100"]
        ]])
    }

    fn entity(roles: &[&str], name: &str) -> Value {
        json!({
            "objectClassName": "entity",
            "handle": format!("H-{name}"),
            "roles": roles,
            "vcardArray": vcard(name)
        })
    }

    fn domain(entities: Vec<Value>) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "objectClassName": "domain",
            "ldhName": "example.com",
            "entities": entities
        }))
        .unwrap()
    }

    #[test]
    fn the_registrar_is_the_top_level_entity_with_that_role() {
        let mut registrar = entity(&["registrar"], "Example Registrar, Inc.");
        registrar["entities"] = json!([entity(&["abuse"], "Registrar Abuse Desk")]);
        let body = domain(vec![
            entity(&["registrant"], "Acme Holdings"),
            entity(&["administrative", "technical"], "Hostmaster"),
            registrar,
            entity(&["reseller"], "Reseller Ltd"),
        ]);
        assert_eq!(
            registrar_of(&body).unwrap().as_deref(),
            Some("Example Registrar, Inc.")
        );
    }

    #[test]
    fn a_nested_registrar_or_another_role_is_not_taken() {
        let mut registrant = entity(&["registrant"], "Acme Holdings");
        registrant["entities"] = json!([entity(&["registrar"], "Nested Registrar")]);
        let body = domain(vec![registrant, entity(&["abuse"], "Abuse")]);
        assert_eq!(registrar_of(&body).unwrap(), None);
        assert_eq!(registrar_of(&domain(Vec::new())).unwrap(), None);
    }

    #[test]
    fn roles_and_property_names_compare_without_case() {
        let mut registrar = entity(&[" Registrar "], "ignored");
        registrar["vcardArray"] =
            json!(["vcard", [["FN", {}, "text", "  Upper\tCase \n Registrar "]]]);
        assert_eq!(
            registrar_of(&domain(vec![registrar])).unwrap().as_deref(),
            Some("Upper Case Registrar")
        );
    }

    #[test]
    fn without_fn_the_public_id_then_the_handle_names_it() {
        let with_id = json!({
            "roles": ["registrar"],
            "handle": "292",
            "publicIds": [{"type": "IANA Registrar ID", "identifier": "292"}],
            "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "  "]]]
        });
        assert_eq!(
            registrar_of(&domain(vec![with_id])).unwrap().as_deref(),
            Some("IANA Registrar ID 292")
        );
        let handle_only = json!({"roles": ["registrar"], "handle": "REG-7"});
        assert_eq!(
            registrar_of(&domain(vec![handle_only])).unwrap().as_deref(),
            Some("REG-7")
        );
    }

    #[test]
    fn a_structured_fn_value_is_joined_and_a_long_one_bounded() {
        assert_eq!(
            jcard_fn(&json!([
                "vcard",
                [["fn", {}, "text", ["Example", "Registrar"]]]
            ]))
            .as_deref(),
            Some("Example Registrar")
        );
        let long = "x".repeat(10_000);
        assert_eq!(
            jcard_fn(&json!(["vcard", [["fn", {}, "text", long]]])).map(|n| n.chars().count()),
            Some(MAX_NAME_CHARS)
        );
        for bad in [
            json!(null),
            json!("vcard"),
            json!(["vcard"]),
            json!(["jcard", [["fn", {}, "text", "X"]]]),
            json!(["vcard", [["fn", {}, "text"]]]),
            json!(["vcard", [["fn"]]]),
            json!(["vcard", [[42, {}, "text", "X"]]]),
        ] {
            assert_eq!(jcard_fn(&bad), None, "{bad}");
        }
    }

    #[test]
    fn anything_but_a_domain_object_is_an_error() {
        for body in [
            &b"<html><body>Rate limited</body></html>"[..],
            b"",
            b"[]",
            br#"{"errorCode": 404, "title": "Not Found"}"#,
            br#"{"objectClassName": "entity", "roles": ["registrar"]}"#,
            br#"{"ldhName": "example.com"}"#,
        ] {
            assert!(
                registrar_of(body).is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
