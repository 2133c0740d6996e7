//! The Route 53 adapter of the hosted-zone port.
//!
//! One or more public hosted zones (the hosted zone, the report host), each record set sent to
//! the zone whose apex is the longest suffix of its name. Changes go out in
//! `ChangeResourceRecordSets` batches (at most [`BATCH`] changes each, under Route 53's 1,000
//! element limit where an UPSERT counts twice), retried with exponential backoff on
//! throttling and `PriorRequestNotComplete`. Removing a record set that is not there is not an
//! error: the current set is read first, as a DELETE must match it exactly.

use async_trait::async_trait;
use aws_sdk_route53::Client;
use aws_sdk_route53::types::{
    Change, ChangeAction, ChangeBatch, ResourceRecord, ResourceRecordSet, RrType,
};
use mailward_domain::hosted_zone::{HostedZone, ZoneError, ZoneRecord, ZoneRecordKind, normalize};
use std::time::Duration;

/// Changes per `ChangeResourceRecordSets` call.
pub const BATCH: usize = 400;
/// Attempts of one call under throttling.
const ATTEMPTS: u32 = 6;

/// Route 53 hosted zones by apex.
#[derive(Clone)]
pub struct Route53Zone {
    client: Client,
    /// `(apex, hosted zone id)`, longest apex first.
    zones: Vec<(String, String)>,
    /// Base delay of the throttling backoff (tests shorten it).
    backoff: Duration,
}

/// Parses `apex=ZONEID,apex=ZONEID` (`MAILWARD_ROUTE53_ZONES`).
pub fn parse_zones(list: &str) -> Result<Vec<(String, String)>, String> {
    list.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|pair| {
            let (apex, id) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?} is not apex=ZONEID"))?;
            let (apex, id) = (
                normalize(apex),
                id.trim().trim_start_matches("/hostedzone/"),
            );
            if apex.is_empty() || id.is_empty() {
                return Err(format!("{pair:?} is not apex=ZONEID"));
            }
            Ok((apex, id.to_owned()))
        })
        .collect()
}

fn rr_type(kind: ZoneRecordKind) -> RrType {
    match kind {
        ZoneRecordKind::Txt => RrType::Txt,
        ZoneRecordKind::Cname => RrType::Cname,
    }
}

/// A TXT value in zone-file form: quoted strings of at most 255 bytes, `"` and `\` escaped.
fn txt_wire(value: &str) -> String {
    mailward_dmarc::to_character_strings(value)
        .iter()
        .map(|p| format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text of a TXT value as Route 53 lists it (quoted strings, concatenated).
fn txt_text(wire: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    let mut chars = wire.chars();
    while let Some(c) = chars.next() {
        match (c, inside) {
            ('"', _) => inside = !inside,
            ('\\', true) => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            (c, true) => out.push(c),
            _ => {}
        }
    }
    out
}

fn is_throttle(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("Throttling" | "ThrottlingException" | "PriorRequestNotComplete")
    )
}

impl Route53Zone {
    /// An adapter over `zones` (`(apex, hosted zone id)`).
    pub fn new(client: Client, mut zones: Vec<(String, String)>) -> Self {
        zones.sort_by_key(|z| std::cmp::Reverse(z.0.len()));
        Self {
            client,
            zones,
            backoff: Duration::from_millis(200),
        }
    }

    /// An adapter with a client built from the SDK configuration.
    pub fn from_config(sdk: &aws_config::SdkConfig, zones: Vec<(String, String)>) -> Self {
        Self::new(Client::new(sdk), zones)
    }

    /// Shortens the throttling backoff (tests).
    pub fn with_backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    fn zone_of(&self, name: &str) -> Result<&str, ZoneError> {
        self.zones
            .iter()
            .find(|(apex, _)| name == apex || name.ends_with(&format!(".{apex}")))
            .map(|(_, id)| id.as_str())
            .ok_or_else(|| ZoneError::Rejected(format!("{name} is in none of the hosted zones")))
    }

    fn record_set(record: &ZoneRecord) -> Result<ResourceRecordSet, ZoneError> {
        let values = record
            .values
            .iter()
            .map(|v| {
                let value = match record.kind {
                    ZoneRecordKind::Txt => txt_wire(v),
                    ZoneRecordKind::Cname => format!("{}.", normalize(v)),
                };
                ResourceRecord::builder()
                    .value(value)
                    .build()
                    .map_err(|e| ZoneError::Rejected(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        ResourceRecordSet::builder()
            .name(format!("{}.", normalize(&record.name)))
            .r#type(rr_type(record.kind))
            .ttl(i64::from(record.ttl))
            .set_resource_records(Some(values))
            .build()
            .map_err(|e| ZoneError::Rejected(e.to_string()))
    }

    /// Sends one batch to one zone, retrying throttling.
    async fn send(&self, zone: &str, changes: Vec<Change>) -> Result<(), ZoneError> {
        let batch = ChangeBatch::builder()
            .set_changes(Some(changes))
            .build()
            .map_err(|e| ZoneError::Rejected(e.to_string()))?;
        let mut delay = self.backoff;
        for attempt in 1..=ATTEMPTS {
            let result = self
                .client
                .change_resource_record_sets()
                .hosted_zone_id(zone)
                .change_batch(batch.clone())
                .send()
                .await;
            match result {
                Ok(_) => return Ok(()),
                Err(e) => {
                    let service = e.as_service_error();
                    let code =
                        service.and_then(|s| aws_sdk_route53::error::ProvideErrorMetadata::code(s));
                    if is_throttle(code) && attempt < ATTEMPTS {
                        tokio::time::sleep(delay).await;
                        delay = delay.saturating_mul(2);
                        continue;
                    }
                    let detail = format!("{}", aws_sdk_route53::error::DisplayErrorContext(&e));
                    return Err(if is_throttle(code) {
                        ZoneError::Throttled(detail)
                    } else if service.is_some() {
                        ZoneError::Rejected(detail)
                    } else {
                        ZoneError::Unavailable(detail)
                    });
                }
            }
        }
        Err(ZoneError::Throttled("retries exhausted".into()))
    }

    /// Sends `changes` grouped by zone, [`BATCH`] at a time.
    async fn apply(&self, changes: Vec<(String, Change)>) -> Result<(), ZoneError> {
        let mut by_zone: Vec<(String, Vec<Change>)> = Vec::new();
        for (zone, change) in changes {
            match by_zone.iter_mut().find(|(z, _)| *z == zone) {
                Some((_, list)) => list.push(change),
                None => by_zone.push((zone, vec![change])),
            }
        }
        for (zone, list) in by_zone {
            for chunk in list.chunks(BATCH) {
                self.send(&zone, chunk.to_vec()).await?;
            }
        }
        Ok(())
    }

    /// The record sets at `name` in its zone.
    async fn read(&self, name: &str) -> Result<Vec<ResourceRecordSet>, ZoneError> {
        let zone = self.zone_of(name)?;
        let fqdn = format!("{name}.");
        let page = self
            .client
            .list_resource_record_sets()
            .hosted_zone_id(zone)
            .start_record_name(&fqdn)
            .max_items(10)
            .send()
            .await
            .map_err(|e| {
                ZoneError::Unavailable(format!(
                    "{}",
                    aws_sdk_route53::error::DisplayErrorContext(&e)
                ))
            })?;
        Ok(page
            .resource_record_sets()
            .iter()
            .filter(|set| normalize(set.name()) == name)
            .cloned()
            .collect())
    }
}

#[async_trait]
impl HostedZone for Route53Zone {
    async fn upsert(&self, records: &[ZoneRecord]) -> Result<(), ZoneError> {
        let mut changes = Vec::with_capacity(records.len());
        for record in records {
            let name = normalize(&record.name);
            let zone = self.zone_of(&name)?.to_owned();
            let change = Change::builder()
                .action(ChangeAction::Upsert)
                .resource_record_set(Self::record_set(record)?)
                .build()
                .map_err(|e| ZoneError::Rejected(e.to_string()))?;
            changes.push((zone, change));
        }
        self.apply(changes).await
    }

    async fn remove(&self, keys: &[(String, ZoneRecordKind)]) -> Result<(), ZoneError> {
        let mut changes = Vec::new();
        for (name, kind) in keys {
            let name = normalize(name);
            let zone = self.zone_of(&name)?.to_owned();
            for set in self.read(&name).await? {
                if set.r#type() == &rr_type(*kind) {
                    let change = Change::builder()
                        .action(ChangeAction::Delete)
                        .resource_record_set(set)
                        .build()
                        .map_err(|e| ZoneError::Rejected(e.to_string()))?;
                    changes.push((zone.clone(), change));
                }
            }
        }
        self.apply(changes).await
    }

    async fn records(&self, name: &str) -> Result<Vec<ZoneRecord>, ZoneError> {
        let name = normalize(name);
        Ok(self
            .read(&name)
            .await?
            .into_iter()
            .filter_map(|set| {
                let kind = match set.r#type() {
                    RrType::Txt => ZoneRecordKind::Txt,
                    RrType::Cname => ZoneRecordKind::Cname,
                    _ => return None,
                };
                let values = set
                    .resource_records()
                    .iter()
                    .map(|r| match kind {
                        ZoneRecordKind::Txt => txt_text(r.value()),
                        ZoneRecordKind::Cname => normalize(r.value()),
                    })
                    .collect();
                Some(ZoneRecord {
                    name: name.clone(),
                    kind,
                    values,
                    ttl: u32::try_from(set.ttl().unwrap_or(0)).unwrap_or(0),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txt_values_round_trip_through_the_zone_file_form() {
        let long = "v=DKIM1; p=".to_owned() + &"A".repeat(400);
        for value in ["v=DMARC1", "say \"hi\" \\ bye", long.as_str()] {
            assert_eq!(txt_text(&txt_wire(value)), value);
        }
        assert_eq!(txt_wire(&long).matches('"').count(), 4);
    }

    #[test]
    fn zones_parse_and_pick_the_longest_apex() {
        let zones = parse_zones("example.com=Z1, reports.example.com=/hostedzone/Z2").unwrap();
        assert_eq!(zones[1], ("reports.example.com".into(), "Z2".into()));
        assert!(parse_zones("example.com").is_err());
        assert!(parse_zones("=Z1").is_err());
    }
}
