//! The sending-source catalogue in the store: the curated catalogue embedded in the build is
//! loaded into the table once per catalogue version (lazily, by the first read that finds the
//! stored version older), and the `/sources` endpoints read the stored copy, where
//! organization-defined sources will join it.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::candidates::DatedSource;
use mailward_domain::sources::{Catalogue, Source};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

const PARTITION: &str = "SOURCES";
const VERSION_SK: &str = "VERSION";
const SOURCE_PREFIX: &str = "SOURCE#";

/// Writes the catalogue into the store unless this version is already there. Idempotent; safe to
/// run from several instances at once (the same items are written).
pub async fn ensure_loaded(
    store: &dyn ItemStore,
    catalogue: &Catalogue,
) -> Result<bool, StoreError> {
    let stored_version = store.get(PARTITION, VERSION_SK, true).await?;
    if stored_version.is_some_and(|item| item.data == catalogue.version.as_bytes()) {
        return Ok(false);
    }
    let stale: Vec<(String, String)> =
        query_all(store, Query::partition(PARTITION).prefix(SOURCE_PREFIX))
            .await?
            .into_iter()
            .map(|i| (i.pk, i.sk))
            .collect();
    let mut ops = Vec::with_capacity(catalogue.sources.len());
    for source in &catalogue.sources {
        ops.push(WriteOp::Put {
            item: Item::new(
                PARTITION,
                format!("{SOURCE_PREFIX}{}", source.external_id),
                encode(source)?,
            ),
            condition: Condition::None,
        });
    }
    for chunk in ops.chunks(50) {
        store.transact(chunk.to_vec()).await?;
    }
    // Sources dropped from the catalogue leave the store too.
    for (pk, sk) in stale {
        let still = catalogue
            .sources
            .iter()
            .any(|s| format!("{SOURCE_PREFIX}{}", s.external_id) == sk);
        if !still {
            store.delete(&pk, &sk, Condition::None).await?;
        }
    }
    store
        .put(
            Item::new(PARTITION, VERSION_SK, catalogue.version.as_bytes().to_vec()),
            Condition::None,
        )
        .await?;
    Ok(true)
}

/// The stored catalogue (sorted by external id, as the embedded one), loading the embedded
/// catalogue first if the store holds an older version.
pub async fn load(store: &dyn ItemStore) -> Result<Catalogue, StoreError> {
    ensure_loaded(store, mailward_domain::sources::catalogue()).await?;
    let version = store
        .get(PARTITION, VERSION_SK, false)
        .await?
        .map(|i| String::from_utf8_lossy(&i.data).into_owned())
        .unwrap_or_default();
    let mut sources: Vec<Source> =
        query_all(store, Query::partition(PARTITION).prefix(SOURCE_PREFIX))
            .await?
            .iter()
            .map(decode)
            .collect::<Result<_, _>>()?;
    sources.extend(promoted(store).await?.into_iter().map(|d| d.source));
    sources.sort_by(|a, b| a.external_id.cmp(&b.external_id));
    Ok(Catalogue { version, sources })
}

/// The catalogue as `org` sees it: its own sources first (they identify its senders before the
/// catalogue's), then the catalogue.
pub async fn load_for(store: &dyn ItemStore, org: Uuid) -> Result<Catalogue, StoreError> {
    let mut catalogue = load(store).await?;
    let mut own: Vec<Source> = custom(store, org)
        .await?
        .into_iter()
        .map(|d| d.source)
        .collect();
    own.extend(catalogue.sources);
    catalogue.sources = own;
    Ok(catalogue)
}

const PROMOTED_PREFIX: &str = "PROMOTED#";

/// Adds a source staff promoted from a candidate (kept apart from the embedded catalogue's
/// items, which a new catalogue version rewrites). A taken external id is a conflict.
pub async fn add_promoted(store: &dyn ItemStore, dated: &DatedSource) -> Result<(), StoreError> {
    let item = Item::new(
        PARTITION,
        format!("{PROMOTED_PREFIX}{}", dated.source.external_id),
        encode(dated)?,
    );
    store.put(item, Condition::NotExists).await
}

/// The sources staff promoted from candidates.
pub async fn promoted(store: &dyn ItemStore) -> Result<Vec<DatedSource>, StoreError> {
    query_all(store, Query::partition(PARTITION).prefix(PROMOTED_PREFIX))
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// An organization's own sources, by name.
pub async fn custom(store: &dyn ItemStore, org: Uuid) -> Result<Vec<DatedSource>, StoreError> {
    let mut own: Vec<DatedSource> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::CUSTOM_SOURCE_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect::<Result<_, _>>()?;
    own.sort_by(|a, b| {
        (a.source.name.to_lowercase(), a.source.id)
            .cmp(&(b.source.name.to_lowercase(), b.source.id))
    });
    Ok(own)
}

/// One of an organization's own sources, with its version.
pub async fn get_custom(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<DatedSource>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::custom_source_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// The write that saves an organization's source (`version`: the one read, `None` to create).
pub fn save_custom_op(
    org: Uuid,
    dated: &DatedSource,
    version: Option<u64>,
) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::org_pk(org),
            keys::custom_source_sk(dated.source.id),
            encode(dated)?,
        )
        .with_version(version.map_or(1, |v| v + 1)),
        condition: version.map_or(Condition::NotExists, Condition::Version),
    })
}

/// The write that deletes an organization's source read at `version`.
pub fn delete_custom_op(org: Uuid, id: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::custom_source_sk(id),
        condition: Condition::Version(version),
    }
}

const CURATION_PREFIX: &str = "CURATION#";

/// Every curation: `(external id, kind, curation)`, kind `dkim` or `spf`.
pub async fn curations(
    store: &dyn ItemStore,
) -> Result<Vec<(String, String, mailward_domain::sources::Curation)>, StoreError> {
    let items = query_all(store, Query::partition(PARTITION).prefix(CURATION_PREFIX)).await?;
    let mut out = Vec::with_capacity(items.len());
    for item in &items {
        let rest = &item.sk[CURATION_PREFIX.len()..];
        if let Some((external_id, kind)) = rest.rsplit_once('#') {
            out.push((external_id.to_owned(), kind.to_owned(), decode(item)?));
        }
    }
    Ok(out)
}

/// Stores the curation of one kind of a source's instructions (kept apart from the source, so
/// a new catalogue version does not undo an approval).
pub async fn save_curation(
    store: &dyn ItemStore,
    external_id: &str,
    kind: &str,
    curation: &mailward_domain::sources::Curation,
) -> Result<(), StoreError> {
    let item = Item::new(
        PARTITION,
        format!("{CURATION_PREFIX}{external_id}#{kind}"),
        encode(curation)?,
    );
    store.put(item, Condition::None).await
}

/// Removes one stored curation.
pub async fn delete_curation(
    store: &dyn ItemStore,
    external_id: &str,
    kind: &str,
) -> Result<(), StoreError> {
    store
        .delete(
            PARTITION,
            &format!("{CURATION_PREFIX}{external_id}#{kind}"),
            Condition::None,
        )
        .await
        .map(|_| ())
}
