//! Small helpers over the resolver port shared by the dimension modules.

use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};

/// The outcome of a lookup, folded the way every dimension needs it: NXDOMAIN and NODATA are
/// both "nothing there" (a definitive answer), failures stay failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looked {
    /// An answer with at least one record of the asked type.
    Found(Answer),
    /// NXDOMAIN or NODATA (the answer may still carry a CNAME chain for NODATA).
    Absent(Answer),
    /// SERVFAIL, timeout, REFUSED, budget: presence unknown.
    Failed(DnsError),
}

impl Looked {
    /// True for a failure (never to be reported as "missing").
    pub fn failed(&self) -> bool {
        matches!(self, Looked::Failed(_))
    }
}

/// Looks up and folds.
pub async fn look(resolver: &dyn DnsResolver, name: &str, record_type: RecordType) -> Looked {
    match resolver.lookup(name, record_type).await {
        Ok(answer) if answer.records.is_empty() => Looked::Absent(answer),
        Ok(answer) => Looked::Found(answer),
        Err(DnsError::NxDomain) => Looked::Absent(Answer::default()),
        Err(e) => Looked::Failed(e),
    }
}

/// The TXT values (strings concatenated) of an answer.
pub fn txt_values(answer: &Answer) -> Vec<String> {
    answer
        .records
        .iter()
        .filter_map(RecordData::txt_value)
        .collect()
}

/// TXT values at `name`: `Ok(values)` (empty when absent) or the failure.
pub async fn txt(resolver: &dyn DnsResolver, name: &str) -> Result<Vec<String>, DnsError> {
    match look(resolver, name, RecordType::Txt).await {
        Looked::Found(a) => Ok(txt_values(&a)),
        Looked::Absent(_) => Ok(Vec::new()),
        Looked::Failed(e) => Err(e),
    }
}
