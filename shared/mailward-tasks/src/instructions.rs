//! How to fix a task (SPEC §2.3 `instructions`): steps for a person and the exact DNS records to
//! publish, taken from the domain's records guidance.

use crate::model::{Task, TaskType};
use crate::problems::PlannedRecord;
use mailward_domain::purpose::Purpose;
use serde::{Deserialize, Serialize};

/// One record to publish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InstructionRecord {
    /// `TXT` or `CNAME`.
    #[serde(rename = "type")]
    pub record_type: String,
    /// The full host name.
    pub name: String,
    /// The exact value.
    pub value: String,
}

/// Steps and records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Instructions {
    /// What to do, in order.
    pub steps: Vec<String>,
    /// The records to publish.
    pub dns_records: Vec<InstructionRecord>,
}

/// The record purposes a task type is fixed by.
pub fn purposes(task_type: TaskType) -> &'static [Purpose] {
    match task_type {
        TaskType::SetUpDmarcRecord | TaskType::UpdateDmarcRecord => &[Purpose::Dmarc],
        TaskType::SetUpSpfRecord
        | TaskType::CleanupSpfRecord
        | TaskType::ReduceSpfLookups
        | TaskType::SourceFailingSpf => &[Purpose::Spf],
        TaskType::SourceFailingDkim | TaskType::DkimSelectorNotImported => &[Purpose::Dkim],
        TaskType::SetUpMtaSts => &[Purpose::MtaSts, Purpose::MtaStsPolicy],
        TaskType::SetUpTlsRpt => &[Purpose::TlsRpt],
        TaskType::SetUpBimi | TaskType::RenewVmcCertificate => &[Purpose::Bimi],
        TaskType::LockdownDomain => &[Purpose::Dmarc, Purpose::Spf],
        _ => &[],
    }
}

/// The instructions of `task` given the domain's planned records.
pub fn instructions(task: &Task, planned: &[PlannedRecord]) -> Instructions {
    let dns_records: Vec<InstructionRecord> = planned
        .iter()
        .filter(|r| purposes(task.task_type).contains(&r.purpose))
        .map(|r| InstructionRecord {
            record_type: r.record_type.clone(),
            name: r.host.clone(),
            value: r.value.clone(),
        })
        .collect();
    let mut steps = vec![task.description.clone()];
    if dns_records.is_empty() {
        steps.push(
            "Make the change at the domain's DNS host (see dns_provider in the records guidance)."
                .to_owned(),
        );
    } else {
        steps.push(format!(
            "At the domain's DNS host, publish {} exactly as listed in dns_records, replacing any record of the same purpose at that name.",
            if dns_records.len() == 1 {
                "the record"
            } else {
                "the records"
            }
        ));
    }
    steps.push(
        "Verify with POST /domains/{id}/verify, or wait for the next monitoring pass: the task resolves itself once the check finds the problem gone.".to_owned(),
    );
    Instructions { steps, dns_records }
}

/// One line on what fixes a problem of this type.
pub fn guidance(task_type: TaskType) -> &'static str {
    match task_type {
        TaskType::SetUpDmarcRecord | TaskType::UpdateDmarcRecord => {
            "Publish the DMARC record from the records guidance at _dmarc, replacing any other."
        }
        TaskType::SetUpSpfRecord | TaskType::CleanupSpfRecord => {
            "Publish one SPF record naming every service that sends as the domain."
        }
        TaskType::ReduceSpfLookups => {
            "Remove includes of services no longer used, or let Mailward host a flattened record."
        }
        TaskType::SetUpMxRecord => {
            "Publish MX records, or a null MX if the domain receives no mail."
        }
        TaskType::SetUpMtaSts => "Host an MTA-STS policy and publish its TXT record.",
        TaskType::SetUpTlsRpt => "Publish a TLS-RPT record with the report address.",
        TaskType::ResolveDnsConflict => "Remove the contradicting records at the named label.",
        TaskType::LockdownDomain => "Publish p=reject, v=spf1 -all and a null MX.",
        TaskType::SetUpBimi => "Publish a BIMI record with an SVG Tiny PS logo.",
        TaskType::UpdateTtl => "Lower the record's TTL to an hour.",
        TaskType::FixMxCertificate => "Install a valid certificate for the MX host's name.",
        TaskType::RenewVmcCertificate => "Renew the mark certificate and publish the new one.",
        TaskType::MeetSenderRequirement => {
            "Fix what GET /domains/{id}/sender-requirements shows failing, at the sender named in its evidence."
        }
        _ => "Review the sender in the domain's report data.",
    }
}
