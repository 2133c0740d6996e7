//! What fixing a problem would add to the domain's score, computed by the audit's own scoring on
//! the audit's findings with the problem's codes removed (0 for problems the score does not
//! measure).

use crate::problems::Problem;
use mailward_audit::verdict::Findings;
use mailward_audit::{AuditResult, Dimension, score};

fn dimension_findings(audit: &AuditResult, dimension: Dimension) -> Option<(Findings, i32)> {
    let assessment = match dimension {
        Dimension::Mx => &audit.mx.as_ref()?.assessment,
        Dimension::Spf => &audit.spf.as_ref()?.assessment,
        Dimension::Dkim => &audit.dkim.as_ref()?.assessment,
        Dimension::Dmarc => &audit.dmarc.as_ref()?.assessment,
        Dimension::Bimi => &audit.bimi.as_ref()?.assessment,
        Dimension::MtaSts => &audit.mta_sts.as_ref()?.assessment,
        Dimension::TlsRpt => &audit.tls_rpt.as_ref()?.assessment,
        Dimension::Dane => &audit.dane.as_ref()?.assessment,
    };
    Some((
        Findings {
            info: assessment.info.clone(),
            errors: assessment.errors.clone(),
            warnings: assessment.warnings.clone(),
        },
        assessment.score,
    ))
}

/// The overall score the audit would give with `removed` codes gone from their dimensions.
pub fn score_without(audit: &AuditResult, removed: &[(Dimension, String)]) -> u8 {
    let scores: Vec<(Dimension, i32)> = score::WEIGHTS
        .iter()
        .filter_map(|w| {
            let (mut findings, current) = dimension_findings(audit, w.dimension)?;
            let gone: Vec<&String> = removed
                .iter()
                .filter(|(d, _)| *d == w.dimension)
                .map(|(_, c)| c)
                .collect();
            if gone.is_empty() {
                return Some((w.dimension, current));
            }
            for list in [
                &mut findings.info,
                &mut findings.errors,
                &mut findings.warnings,
            ] {
                list.retain(|c| !gone.contains(&c));
            }
            Some((w.dimension, findings.score(w.dimension)))
        })
        .collect();
    score::overall_score(&scores, audit.summary.parked)
}

/// The gain of fixing `problem`: the score without its codes, minus the score now.
pub fn score_gain(audit: &AuditResult, problem: &Problem) -> u8 {
    if problem.codes.is_empty() {
        return 0;
    }
    score_without(audit, &problem.codes).saturating_sub(audit.summary.score)
}
