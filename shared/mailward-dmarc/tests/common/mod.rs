//! An in-memory resolver: a map of (name, type) to a result. Names not in the map are
//! NXDOMAIN. Every query is logged so tests can count them.

#![allow(dead_code)]

use async_trait::async_trait;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct FakeResolver {
    pub entries: HashMap<(String, RecordType), Result<Answer, DnsError>>,
    pub log: Mutex<Vec<(String, RecordType)>>,
}

impl FakeResolver {
    pub fn new() -> Self {
        Self::default()
    }

    /// One TXT record per string at `name`.
    pub fn txt(mut self, name: &str, records: &[&str]) -> Self {
        let records = records
            .iter()
            .map(|r| RecordData::Txt(vec![r.as_bytes().to_vec()]))
            .collect();
        self.entries.insert(
            (name.to_string(), RecordType::Txt),
            Ok(Answer {
                records,
                cname_chain: Vec::new(),
                ttl: Some(300),
            }),
        );
        self
    }

    /// TXT records reached through a CNAME chain.
    pub fn txt_via_cname(mut self, name: &str, chain: &[&str], records: &[&str]) -> Self {
        let records = records
            .iter()
            .map(|r| RecordData::Txt(vec![r.as_bytes().to_vec()]))
            .collect();
        self.entries.insert(
            (name.to_string(), RecordType::Txt),
            Ok(Answer {
                records,
                cname_chain: chain.iter().map(|s| s.to_string()).collect(),
                ttl: Some(60),
            }),
        );
        self
    }

    pub fn set(mut self, name: &str, rtype: RecordType, result: Result<Answer, DnsError>) -> Self {
        self.entries.insert((name.to_string(), rtype), result);
        self
    }

    pub fn fail(self, name: &str, rtype: RecordType, error: DnsError) -> Self {
        self.set(name, rtype, Err(error))
    }

    pub fn records(self, name: &str, rtype: RecordType, records: Vec<RecordData>) -> Self {
        self.set(
            name,
            rtype,
            Ok(Answer {
                records,
                cname_chain: Vec::new(),
                ttl: Some(300),
            }),
        )
    }

    pub fn queries(&self) -> Vec<(String, RecordType)> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub fn txt_queries(&self) -> Vec<String> {
        self.queries()
            .into_iter()
            .filter(|(_, t)| *t == RecordType::Txt)
            .map(|(n, _)| n)
            .collect()
    }
}

#[async_trait]
impl DnsResolver for FakeResolver {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if let Ok(mut log) = self.log.lock() {
            log.push((name.clone(), record_type));
        }
        self.entries
            .get(&(name, record_type))
            .cloned()
            .unwrap_or(Err(DnsError::NxDomain))
    }
}
