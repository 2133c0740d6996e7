//! Headless signup (SPEC §4.7): the two request bodies and the first answer.

use crate::organizations::PricingTypeView;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /signup` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SignupStarted {
    /// Pass it to `POST /signup/verify` with the emailed code.
    pub signup_id: Uuid,
    /// Always 900.
    pub expires_in_seconds: u32,
}

/// `POST /signup` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignupRequest {
    /// Work or personal address; disposable domains are refused.
    #[schema(format = "email")]
    pub email: String,
    /// 3 to 128 characters without control characters (surrounding spaces are trimmed).
    #[schema(value_type = crate::organizations::OrganizationName)]
    pub organization_name: String,
    /// Plan; defaults to `free`.
    pub pricing_type: Option<PricingTypeView>,
    /// Marketing attribution id.
    pub attribution_id: Option<Uuid>,
}

/// `POST /signup/verify` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    /// From `POST /signup`.
    pub signup_id: Uuid,
    /// The six digits from the email.
    #[schema(pattern = "^[0-9]{6}$")]
    pub code: String,
}
