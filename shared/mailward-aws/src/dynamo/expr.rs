//! Condition, key-condition and filter expressions, each carrying exactly the placeholders it
//! uses (DynamoDB rejects unused names and values).
//!
//! Expiry is part of every condition: an item whose `ttl` is at or before "now" counts as absent,
//! because DynamoDB's TTL reaper deletes lazily (up to days late) and moto never does.

use super::codec::{Attrs, PK, TTL, VERSION, key_attrs, n, s};
use aws_sdk_dynamodb::types::AttributeValue;
use mailward_domain::store::{Condition, Index, SortKey};
use std::collections::HashMap;

/// Live: present and not expired.
const LIVE: &str = "(attribute_exists(#pk) AND (attribute_not_exists(#ttl) OR #ttl > :now))";
/// Absent: missing or expired (a missing `ttl` makes `#ttl <= :now` false).
const ABSENT: &str = "(attribute_not_exists(#pk) OR #ttl <= :now)";

/// An expression and the attribute names and values it refers to.
#[derive(Debug, Default, Clone)]
pub(super) struct Expr {
    pub text: String,
    pub names: HashMap<String, String>,
    pub values: Attrs,
}

impl Expr {
    fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    fn name(mut self, placeholder: &str, attr: &str) -> Self {
        self.names.insert(placeholder.to_owned(), attr.to_owned());
        self
    }

    fn value(mut self, placeholder: &str, value: AttributeValue) -> Self {
        self.values.insert(placeholder.to_owned(), value);
        self
    }

    fn now(self, now: i64) -> Self {
        self.name("#pk", PK).name("#ttl", TTL).value(":now", n(now))
    }

    /// Names for the SDK's `set_expression_attribute_names` (None when there are none).
    pub fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    /// Values for the SDK's `set_expression_attribute_values` (None when there are none).
    pub fn values(&self) -> Option<Attrs> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

/// The condition expression for `condition` at `now`; `None` when unconditional.
pub(super) fn condition(condition: Condition, now: i64) -> Option<Expr> {
    match condition {
        Condition::None => None,
        Condition::NotExists => Some(Expr::new(ABSENT).now(now)),
        Condition::Exists => Some(Expr::new(LIVE).now(now)),
        Condition::Version(version) => Some(
            Expr::new(format!("#v = :version AND {LIVE}"))
                .now(now)
                .name("#v", VERSION)
                .value(":version", n(version)),
        ),
    }
}

/// A condition for a transaction's `ConditionCheck`, which DynamoDB requires to have one:
/// `Condition::None` becomes a tautology.
pub(super) fn check_condition(cond: Condition, now: i64) -> Expr {
    condition(cond, now).unwrap_or_else(|| {
        Expr::new("attribute_not_exists(#pk) OR attribute_exists(#pk)").name("#pk", PK)
    })
}

/// Keeps only live items in query results.
pub(super) fn live_filter(now: i64) -> Expr {
    Expr::new("attribute_not_exists(#ttl) OR #ttl > :now")
        .name("#ttl", TTL)
        .value(":now", n(now))
}

/// The `KeyConditionExpression` for a partition and sort-key restriction on `index`, or `None`
/// when the restriction can match nothing (an inverted range).
pub(super) fn key_condition(index: Index, partition: &str, sort: &SortKey) -> Option<Expr> {
    let (_, pk_attr, sk_attr) = key_attrs(index);
    let base = Expr::new("#kp = :kp")
        .name("#kp", pk_attr)
        .value(":kp", s(partition));
    let ranged = |text: &str, bounds: &[&str]| {
        let mut expr = base.clone().name("#ks", sk_attr);
        expr.text = format!("#kp = :kp AND {text}");
        for (i, bound) in bounds.iter().enumerate() {
            expr = expr.value(&format!(":k{i}"), s(bound));
        }
        expr
    };
    Some(match sort {
        SortKey::All => base,
        SortKey::Prefix(p) if p.is_empty() => base,
        SortKey::Prefix(p) => ranged("begins_with(#ks, :k0)", &[p]),
        SortKey::Between(low, high) if low > high => return None,
        SortKey::Between(low, high) => ranged("#ks BETWEEN :k0 AND :k1", &[low, high]),
        SortKey::AtLeast(low) => ranged("#ks >= :k0", &[low]),
        SortKey::AtMost(high) => ranged("#ks <= :k0", &[high]),
    })
}

/// Merges the placeholders of expressions sent in one request (e.g. key condition and filter).
pub(super) fn merged(exprs: &[&Expr]) -> Expr {
    let mut out = Expr::default();
    for expr in exprs {
        out.names.extend(expr.names.clone());
        out.values.extend(expr.values.clone());
    }
    out
}
