//! What both object stores must do alike beyond put/get/head/delete: list keys by prefix.

use mailward_domain::objects::ObjectStore;

/// Lists by prefix: only keys under it, in byte order, none after deletion; a prefix that
/// names no folder is an empty list, not an error.
pub async fn object_listing_conformance(store: &dyn ObjectStore) {
    let keys = [
        "r/2026-01-02/b",
        "r/2026-01-01/a",
        "r/2026-01-01/c",
        "rr/x",
        "s/y",
    ];
    for key in keys {
        store
            .put(key, bytes::Bytes::from_static(b"1"), "text/plain")
            .await
            .expect("put");
    }
    assert_eq!(
        store.list("r/").await.expect("list"),
        vec!["r/2026-01-01/a", "r/2026-01-01/c", "r/2026-01-02/b"]
    );
    assert_eq!(
        store.list("r/2026-01-01/").await.expect("list"),
        vec!["r/2026-01-01/a", "r/2026-01-01/c"]
    );
    assert!(store.list("missing/").await.expect("list").is_empty());
    for key in keys {
        store.delete(key).await.expect("delete");
    }
    assert!(store.list("r/").await.expect("list").is_empty());
}
