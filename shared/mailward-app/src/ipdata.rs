//! The IP ownership data (`mailward_ipdata`) as this process holds it: read from object
//! storage (`ipdata/`, where `mailward ipdata update` puts it, locally under the data
//! directory, on AWS in the objects bucket), kept in memory, and read again when the stored
//! file's size changes, checked at most every [`RECHECK`]. Without the file, or without object
//! storage, there is no data and senders are not enriched.

use mailward_domain::objects::ObjectStore;
use mailward_ipdata::IpData;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the IPinfo Lite MMDB file is kept.
pub const MMDB_KEY: &str = "ipdata/ipinfo_lite.mmdb";

/// Where parsedmarc's reverse-DNS base-domain map is kept.
pub const MAP_KEY: &str = "ipdata/base_reverse_dns_map.csv";

/// How often the stored file is checked for a new one.
pub const RECHECK: Duration = Duration::from_secs(600);

/// What the process holds.
#[derive(Default)]
pub struct Cache {
    held: tokio::sync::Mutex<Option<Held>>,
}

struct Held {
    checked: Instant,
    size: Option<u64>,
    data: Option<Arc<IpData>>,
}

impl Cache {
    /// Forgets what is held: the next use reads object storage again (after an install by this
    /// process; other processes see a new file within [`RECHECK`]).
    pub async fn forget(&self) {
        *self.held.lock().await = None;
    }

    /// The data, loaded or refreshed from `objects` when due.
    pub async fn get(&self, objects: Option<&dyn ObjectStore>) -> Option<Arc<IpData>> {
        let objects = objects?;
        let mut held = self.held.lock().await;
        if let Some(h) = held.as_ref()
            && h.checked.elapsed() < RECHECK
        {
            return h.data.clone();
        }
        let size = objects.head(MMDB_KEY).await.ok().flatten().map(|i| i.size);
        if let Some(h) = held.as_mut()
            && h.size == size
        {
            h.checked = Instant::now();
            return h.data.clone();
        }
        let data = match size {
            None => None,
            Some(_) => load(objects).await,
        };
        *held = Some(Held {
            checked: Instant::now(),
            size,
            data: data.clone(),
        });
        data
    }
}

async fn load(objects: &dyn ObjectStore) -> Option<Arc<IpData>> {
    let mmdb = match objects.get(MMDB_KEY).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(error = %e, "the IP data could not be read");
            return None;
        }
    };
    let map = objects
        .get(MAP_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok());
    match IpData::new(mmdb, map.as_deref()) {
        Ok(data) => Some(Arc::new(data)),
        Err(e) => {
            tracing::warn!(error = %e, "the stored IP data is not usable");
            None
        }
    }
}
