//! `mailward ipdata`: where the IP ownership data comes from.
//!
//! The data is IPinfo Lite (country and autonomous system per network, CC BY-SA 4.0,
//! ipinfo.io) with parsedmarc's reverse-DNS base-domain map (Apache-2.0), taken from
//! parsedmarc's own package on PyPI, the version pinned with its SHA-256: the files are 25 MB
//! and renewed monthly upstream, so they are fetched at install time (`mailward ipdata fetch`,
//! which `tests/run` also uses) rather than kept in the repository, and a newer IPinfo file
//! can be installed at any time with `mailward ipdata update FILE`.

use anyhow::{Context as _, anyhow, bail};
use std::path::Path;

/// The parsedmarc package the files come from.
pub const WHEEL: &str = "parsedmarc-11.1.0-py3-none-any.whl";

/// Its address on PyPI's file host (content-addressed: it never changes).
pub const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/23/57/e08925ddb81625ef1b9a61af7c6b39388545866bf85d52d018ba79b62aeb/parsedmarc-11.1.0-py3-none-any.whl";

/// Its SHA-256, as PyPI lists it.
pub const WHEEL_SHA256: &str = "d30acc6778e8241b33c6fc098eabc0a060f6058f456804fadb1d54041d8f4548";

const MMDB_ENTRY: &str = "parsedmarc/resources/ipinfo/ipinfo_lite.mmdb";
const MAP_ENTRY: &str = "parsedmarc/resources/maps/base_reverse_dns_map.csv";

/// The two files.
pub struct Files {
    /// The IPinfo Lite MMDB file.
    pub mmdb: Vec<u8>,
    /// parsedmarc's `base_reverse_dns_map.csv`.
    pub map: String,
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The pinned package, from `cache` when a good copy is there, else downloaded (and kept
/// there); its digest is checked either way.
pub async fn fetch(cache: &Path) -> anyhow::Result<Files> {
    let path = cache.join(WHEEL);
    let wheel = match std::fs::read(&path) {
        Ok(bytes) if sha256_hex(&bytes) == WHEEL_SHA256 => bytes,
        _ => {
            let bytes = reqwest::get(WHEEL_URL)
                .await
                .and_then(reqwest::Response::error_for_status)
                .with_context(|| format!("downloading {WHEEL} from PyPI"))?
                .bytes()
                .await
                .with_context(|| format!("downloading {WHEEL} from PyPI"))?
                .to_vec();
            let digest = sha256_hex(&bytes);
            if digest != WHEEL_SHA256 {
                bail!("{WHEEL} from PyPI has SHA-256 {digest}, not the pinned {WHEEL_SHA256}");
            }
            std::fs::create_dir_all(cache)
                .with_context(|| format!("creating {}", cache.display()))?;
            let tmp = path.with_extension("part");
            std::fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
            bytes
        }
    };
    extract(&wheel)
}

/// The two files out of the package.
pub fn extract(wheel: &[u8]) -> anyhow::Result<Files> {
    use std::io::Read as _;
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(wheel)).context("reading the package")?;
    let mut read = |name: &str| -> anyhow::Result<Vec<u8>> {
        let mut entry = zip
            .by_name(name)
            .map_err(|e| anyhow!("the package has no {name}: {e}"))?;
        let mut out = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
        entry
            .read_to_end(&mut out)
            .with_context(|| format!("reading {name}"))?;
        Ok(out)
    };
    let mmdb = read(MMDB_ENTRY)?;
    let map = String::from_utf8(read(MAP_ENTRY)?).context("the map is not UTF-8")?;
    Ok(Files { mmdb, map })
}
