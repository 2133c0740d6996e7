//! Installing the IP ownership data (`mailward ipdata update`): the IPinfo Lite MMDB file and,
//! optionally, parsedmarc's reverse-DNS base-domain map, checked by reading them, then kept in
//! object storage where every process of the deployment loads them from
//! (`mailward_app::ipdata`).

use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_app::ipdata::{MAP_KEY, MMDB_KEY};

/// What was installed.
#[derive(Debug, Clone)]
pub struct Installed {
    /// When the database was built (Unix seconds).
    pub built_at: u64,
    /// Base domains the map names (0 without a map).
    pub services: usize,
}

/// Checks and stores the data; the previous map stays when none is given.
pub async fn install(
    app: &AppState,
    mmdb: Vec<u8>,
    map_csv: Option<String>,
) -> Result<Installed, ServiceError> {
    let objects = app.objects.as_ref().ok_or_else(|| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "object_storage_unavailable",
            "this deployment has no object storage to keep the IP data in",
        )
    })?;
    let bytes = bytes::Bytes::from(mmdb);
    let data = mailward_ipdata::IpData::new(bytes.to_vec(), map_csv.as_deref()).map_err(|e| {
        ServiceError::new(ErrorKind::Unprocessable, "ip_data_invalid", e.to_string())
    })?;
    let installed = Installed {
        built_at: data.built_at,
        services: data.services_len(),
    };
    if let Some(map) = map_csv {
        objects
            .put(MAP_KEY, bytes::Bytes::from(map), "text/csv")
            .await
            .map_err(ServiceError::unavailable)?;
    }
    objects
        .put(MMDB_KEY, bytes, "application/octet-stream")
        .await
        .map_err(ServiceError::unavailable)?;
    app.forget_ip_data().await;
    Ok(installed)
}
