//! What the server accepts, said in the schema where a Rust type alone says less: closed sets
//! of words, domain names, trimmed text, numbers in a query that must carry a value. A stock
//! fuzzer (schemathesis, `tests/fuzz/run`) sends whatever the document allows and expects it
//! accepted, and sends what it forbids and expects it refused; so a parameter documented as a
//! plain string while the server takes three words is a finding both ways.
//!
//! A schema is attached through a type that exists only to document it ([`schema_type!`],
//! [`words!`]): `value_type = Name` (with `inline` on a query parameter) keeps the field's own
//! description and `required`, which `schema_with` would drop, and utoipa's `pattern` takes only
//! a literal, so a pattern written once here is reused through its type.

use utoipa::openapi::schema::{AllOfBuilder, Object, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};

/// A string schema admitting exactly `words` (an OpenAPI `enum`).
pub fn one_of<'a>(words: impl IntoIterator<Item = &'a str>) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(words.into_iter().map(str::to_owned)))
        .build()
}

/// Control characters (Unicode `Cc`), as a regular-expression class body.
const CONTROLS: &str = r"\u0000-\u001F\u007F-\u009F";

/// Text the server trims, then wants `min` to `max` characters long without a control
/// character (names, labels). Surrounding white space is allowed: it is trimmed. `max` bounds
/// the untrimmed text, a little stricter than the server.
pub fn text(min: usize, max: usize) -> Object {
    let edge = format!(r"[^\s{CONTROLS}]");
    let inner = format!("[^{CONTROLS}]");
    let trimmed = match min {
        0 => format!("({edge}({inner}*{edge})?)?"),
        1 => format!("{edge}({inner}*{edge})?"),
        _ => format!("{edge}{inner}{{{},}}{edge}", min - 2),
    };
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(r"^\s*{trimmed}\s*$")))
        .max_length(Some(max))
        .build()
}

/// Text without a control character anywhere, at most `max` characters; with `visible`, not
/// blank either.
pub fn plain_text(visible: bool, max: usize) -> Object {
    let any = format!("[^{CONTROLS}]*");
    let pattern = if visible {
        format!(r"^{any}[^\s{CONTROLS}]{any}$")
    } else {
        format!("^{any}$")
    };
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .max_length(Some(max))
        .build()
}

/// Text the server trims, then wants 1 to `max` characters long (control characters allowed:
/// message bodies).
pub fn prose(max: usize) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(r"^[\s\S]*[^\s\u0085][\s\S]*$"))
        .max_length(Some(max))
        .build()
}

/// A label of a domain name: letters, digits and hyphens, not at either end, 1 to 63.
const LABEL: &str = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
/// The last label: a letter first, so it never reads as an IP address.
const TOP_LABEL: &str = "[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

/// A domain to watch as people paste it (`mailward_domain::names::domain_from_input`): at least
/// two labels of letters, digits and hyphens (not at either end), the last starting with a
/// letter so it never reads as an IP address; optionally `http://` or `https://` before it and
/// a path, query or fragment after it, which are dropped. The server also takes upper case,
/// surrounding spaces and an IDN, and normalises them; the pattern documents the plain form.
pub fn pasted_domain() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(
            r"^(https?://)?({LABEL}\.)+{TOP_LABEL}\.?([/?#][\s\S]*)?$"
        )))
        .build()
}

/// A DNS host name as the tools take it (`mailward_domain::names::normalize_host`): at least two
/// labels, those before the last of letters, digits, hyphens and `_` (`_dmarc.example.com`),
/// the last starting with a letter; one trailing dot; at most 253 characters.
pub fn host_name() -> Object {
    let label = "[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(r"^({label}\.)+{TOP_LABEL}\.?$")))
        .max_length(Some(253))
        .build()
}

/// A TCP port, 0 to 65535.
const PORT: &str =
    "([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])";

/// An absolute URL as the server reads it (the `url` crate): `scheme://`, a host name of two
/// labels or more, an optional port, then a path, query or fragment of `rest` characters; at
/// most 2048 characters. A host label may carry every ASCII character the URL standard allows
/// in a domain (letters, digits and `` !"$&'()*+,;=_`{}~- ``; without `;` when `rest` refuses
/// it), the last label starting with a letter: a host that reads as an IP address (even one
/// written as a number) may be private, and `localhost` is refused where the service connects,
/// so the pattern documents host names only. No `format: uri`, since the server also takes
/// characters a URI must escape (it escapes them itself).
pub fn url(scheme: &str, rest: &str, semicolon: bool) -> Object {
    let label = if semicolon {
        r#"[A-Za-z0-9!"$&'()*+,;=_`{}~-]"#
    } else {
        r#"[A-Za-z0-9!"$&'()*+,=_`{}~-]"#
    };
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(
            r"^{scheme}://({label}+\.)+[A-Za-z]{label}*\.?(:{PORT})?([/?#]{rest}*)?$"
        )))
        .max_length(Some(2048))
        .build()
}

/// The component `base` with `rule` on top (`allOf`): how a body says what its fields alone
/// cannot, such as "exactly one of these" (`rule` a `oneOf` of [`carries`] branches) or "at
/// least one of these" (an `anyOf`).
pub fn refined(base: &str, rule: impl Into<RefOr<Schema>>) -> Schema {
    AllOfBuilder::new()
        .item(Ref::from_schema_name(base))
        .item(rule)
        .into()
}

/// A branch of a [`refined`] rule: `field` is present with a value matching `value`, and each of
/// `absent` is missing or null.
pub fn carries(field: &str, value: impl Into<RefOr<Schema>>, absent: &[&str]) -> Object {
    let mut branch = ObjectBuilder::new().required(field).property(field, value);
    for other in absent {
        branch = branch.property(*other, ObjectBuilder::new().schema_type(Type::Null));
    }
    branch.build()
}

/// Declares a type that only documents a schema, for `value_type = Name` on a field (a `$ref`
/// to the component `Name`) or `value_type = Name, inline` on a query parameter. The form is
/// `schema_type!(#[doc] pub Name = expression)`, the expression giving the schema; a schema
/// that refers to components (a [`refined`] one) ends with `; uses A, B` naming them, so they
/// are added to the document with it.
#[macro_export]
macro_rules! schema_type {
    ($(#[$meta:meta])* $vis:vis $name:ident = $schema:expr $(; uses $($dep:ty),+)?) => {
        $(#[$meta])*
        $vis struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $schema.into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn schemas(
                _schemas: &mut Vec<(
                    String,
                    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
                )>,
            ) {
                $($(
                    _schemas.push((
                        <$dep as utoipa::ToSchema>::name().into_owned(),
                        <$dep as utoipa::PartialSchema>::schema(),
                    ));
                    <$dep as utoipa::ToSchema>::schemas(_schemas);
                )+)?
            }
        }
    };
}

/// [`schema_type!`] for a closed set of words: `words!(#[doc] pub Name = ["a", "b"])`, or any
/// iterator of `&str` (a catalogue's names).
#[macro_export]
macro_rules! words {
    ($(#[$meta:meta])* $vis:vis $name:ident = $words:expr) => {
        $crate::schema_type!($(#[$meta])* $vis $name = $crate::constraints::one_of($words));
    };
}

schema_type!(
    /// A label for people: 1 to 100 characters without control characters, surrounding spaces
    /// trimmed.
    pub Label = text(1, 100)
);
schema_type!(
    /// An OAuth client id: 1 to 256 characters without control characters, surrounding spaces
    /// trimmed.
    pub ClientId = text(1, 256)
);
schema_type!(
    /// An `acr` value: 1 to 256 characters without control characters.
    pub AcrValue = plain_text(true, 256)
);
schema_type!(
    /// An https URL the service connects to: a public host name (no credentials), an optional
    /// port, at most 2048 characters.
    pub HttpsUrl = url("https", r"[\s\S]", true)
);
schema_type!(
    /// An https URL written into a DNS record: without `;` (it ends a record's tag), at most
    /// 2048 characters.
    pub RecordUrl = url("https", "[^;]", false)
);
schema_type!(
    /// A DNS host name: at least two dot-separated labels of letters, digits, hyphens and `_`
    /// (the last of letters, digits and hyphens, starting with a letter), at most 253
    /// characters, one trailing dot allowed.
    pub HostName = host_name()
);

/// Deserializes a number or flag of a query string that must carry a value: `page=` is refused
/// ("cannot parse integer from empty string") instead of being read as absent, which is what
/// the form decoder does for `Option<u32>` and `Option<bool>` by itself. Use with
/// `#[serde(default, deserialize_with = "...")]`.
pub fn present<'de, D, T>(de: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let raw = <String as serde::Deserialize>::deserialize(de)?;
    raw.parse().map(Some).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error, StrDeserializer};

    fn query_value<T>(raw: &str) -> Result<Option<T>, Error>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        let de: StrDeserializer<'_, Error> = raw.into_deserializer();
        present(de)
    }

    #[test]
    fn a_query_number_or_flag_must_carry_a_value() {
        assert_eq!(query_value::<u32>("7").unwrap(), Some(7));
        assert!(query_value::<u32>("").is_err());
        assert!(query_value::<u32>("7.5").is_err());
        assert_eq!(query_value::<bool>("true").unwrap(), Some(true));
        assert!(query_value::<bool>("").is_err());
    }

    #[test]
    fn text_patterns_want_their_least_length_after_trimming() {
        let pattern = |o: Object| o.pattern.unwrap();
        let edge = r"[^\s\u0000-\u001F\u007F-\u009F]";
        let inner = r"[^\u0000-\u001F\u007F-\u009F]";
        assert_eq!(
            pattern(text(1, 10)),
            format!(r"^\s*{edge}({inner}*{edge})?\s*$")
        );
        assert_eq!(
            pattern(text(3, 10)),
            format!(r"^\s*{edge}{inner}{{1,}}{edge}\s*$")
        );
        assert_eq!(text(3, 128).max_length, Some(128));
    }
}
