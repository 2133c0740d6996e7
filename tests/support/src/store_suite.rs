//! The item-store conformance suite.

use mailward_domain::store::{
    Condition, Index, Item, ItemStore, Query, SortKey, StoreError, WriteOp, query_all,
};
use mailward_domain::{Clock as _, ManualClock};
use std::sync::Arc;
use time::Duration;

fn unique(prefix: &str) -> String {
    format!("{prefix}#{}", uuid::Uuid::new_v4())
}

fn item(pk: &str, sk: &str, body: &str) -> Item {
    Item::new(pk, sk, body.as_bytes().to_vec())
}

/// Runs every store case against `store`, which must judge TTLs by `clock`.
/// Each case uses fresh random partition keys, so one backing table serves all of them.
pub async fn store_conformance(store: Arc<dyn ItemStore>, clock: Arc<ManualClock>) {
    put_then_get_round_trips_every_field(&*store).await;
    conditional_put_not_exists_refuses_a_second_writer(&*store).await;
    version_condition_detects_lost_updates(&*store).await;
    delete_honours_conditions_and_reports_existence(&*store).await;
    query_pages_in_order_with_prefix_and_cursor(&*store).await;
    query_ranges_and_descending_order(&*store).await;
    secondary_indexes_are_queryable(&*store).await;
    transaction_applies_all_ops(&*store).await;
    transaction_that_fails_changes_nothing(&*store).await;
    transaction_rejects_duplicate_keys(&*store).await;
    put_all_writes_more_than_one_batch_and_replaces(&*store).await;
    get_many_answers_in_the_order_asked(&*store, &clock).await;
    write_each_applies_every_op_whose_condition_holds(&*store).await;
    a_single_op_transaction_keeps_the_transaction_contract(&*store).await;
    counters_are_atomic_under_concurrency(Arc::clone(&store)).await;
    racing_conditional_puts_have_exactly_one_winner(Arc::clone(&store)).await;
    expired_items_are_invisible(&*store, &clock).await;
    expired_counters_restart(&*store, &clock).await;
    scan_walks_every_live_item_once(&*store, &clock).await;
}

/// `put_all` writes 60 items (more than one DynamoDB batch of 25), replaces what was there
/// (versions and expiry as given), and refuses two puts of one key.
async fn put_all_writes_more_than_one_batch_and_replaces(store: &dyn ItemStore) {
    let pk = unique("BULK");
    store
        .put(item(&pk, "S005", "old").with_version(9), Condition::None)
        .await
        .unwrap();
    let items: Vec<Item> = (0..60)
        .map(|i| item(&pk, &format!("S{i:03}"), &format!("v{i}")).with_version(2))
        .collect();
    store.put_all(items).await.unwrap();
    let found = query_all(store, Query::partition(pk.clone()))
        .await
        .unwrap();
    assert_eq!(found.len(), 60);
    assert!(
        found
            .iter()
            .enumerate()
            .all(|(i, it)| it.sk == format!("S{i:03}")
                && it.data == format!("v{i}").into_bytes()
                && it.version == 2)
    );
    store.put_all(Vec::new()).await.unwrap();
    let twice = vec![item(&pk, "DUP", "a"), item(&pk, "DUP", "b")];
    assert!(matches!(
        store.put_all(twice).await,
        Err(StoreError::Invalid(_))
    ));
}

/// `get_many` answers 230 keys (more than two DynamoDB batches of 100) in the order asked:
/// missing, expired and empty keys as `None`, a key asked twice answered twice.
async fn get_many_answers_in_the_order_asked(store: &dyn ItemStore, clock: &ManualClock) {
    let pk = unique("MANY");
    let items: Vec<Item> = (0..200)
        .map(|i| item(&pk, &format!("S{i:03}"), &format!("v{i}")).with_version(3))
        .collect();
    store.put_all(items).await.unwrap();
    store
        .put(
            item(&pk, "GONE", "x").expiring_at(clock.unix() + 1),
            Condition::None,
        )
        .await
        .unwrap();
    clock.advance(Duration::seconds(2));
    let mut keys: Vec<(String, String)> = (0..220)
        .rev()
        .map(|i| (pk.clone(), format!("S{i:03}")))
        .collect();
    keys.push((pk.clone(), "S007".into()));
    keys.push((pk.clone(), "GONE".into()));
    keys.push((pk.clone(), String::new()));
    keys.extend((0..7).map(|i| (unique("NONE"), format!("S{i:03}"))));
    let found = store.get_many(keys.clone(), true).await.unwrap();
    assert_eq!(found.len(), keys.len());
    for ((key_pk, sk), got) in keys.iter().zip(&found) {
        let n: Option<usize> = sk.strip_prefix('S').and_then(|n| n.parse().ok());
        match n.filter(|n| *key_pk == pk && *n < 200) {
            Some(n) => {
                let got = got.as_ref().unwrap_or_else(|| panic!("{sk} missing"));
                assert_eq!(got.sk, *sk);
                assert_eq!(got.data, format!("v{n}").into_bytes());
                assert_eq!(got.version, 3);
            }
            None => assert!(got.is_none(), "{key_pk} {sk} found"),
        }
    }
    assert!(found[220].is_some() && found[221].is_none() && found[222].is_none());
    assert!(found[223..].iter().all(Option::is_none));
    assert!(store.get_many(Vec::new(), false).await.unwrap().is_empty());
}

/// `write_each` skips only the ops whose condition fails and says which applied.
async fn write_each_applies_every_op_whose_condition_holds(store: &dyn ItemStore) {
    let pk = unique("EACH");
    store
        .put(item(&pk, "TAKEN", "x").with_version(3), Condition::None)
        .await
        .unwrap();
    store
        .put(item(&pk, "GONE", "x"), Condition::None)
        .await
        .unwrap();
    let applied = store
        .write_each(vec![
            WriteOp::Put {
                item: item(&pk, "NEW", "n"),
                condition: Condition::NotExists,
            },
            WriteOp::Put {
                item: item(&pk, "TAKEN", "lost").with_version(2),
                condition: Condition::Version(1),
            },
            WriteOp::Delete {
                pk: pk.clone(),
                sk: "GONE".into(),
                condition: Condition::Exists,
            },
            WriteOp::Put {
                item: item(&pk, "ALSO", "a"),
                condition: Condition::None,
            },
        ])
        .await
        .unwrap();
    assert_eq!(applied, [true, false, true, true]);
    let taken = store.get(&pk, "TAKEN", true).await.unwrap().unwrap();
    assert_eq!((taken.data, taken.version), (b"x".to_vec(), 3));
    assert!(store.get(&pk, "GONE", true).await.unwrap().is_none());
    assert!(store.get(&pk, "ALSO", true).await.unwrap().is_some());
    assert!(store.write_each(Vec::new()).await.unwrap().is_empty());
}

/// A transaction of one put or one delete (which an adapter may send as a plain conditional
/// write) fails as a transaction does: cancelled at op 0, nothing written.
async fn a_single_op_transaction_keeps_the_transaction_contract(store: &dyn ItemStore) {
    let pk = unique("ONE");
    let put = |body: &str| WriteOp::Put {
        item: item(&pk, "A", body),
        condition: Condition::NotExists,
    };
    store.transact(vec![put("first")]).await.unwrap();
    assert!(matches!(
        store.transact(vec![put("second")]).await,
        Err(StoreError::TransactionCanceled { failed: Some(0) })
    ));
    assert_eq!(
        store.get(&pk, "A", true).await.unwrap().unwrap().data,
        b"first".to_vec()
    );
    let delete = |condition| WriteOp::Delete {
        pk: pk.clone(),
        sk: "A".into(),
        condition,
    };
    assert!(matches!(
        store.transact(vec![delete(Condition::Version(7))]).await,
        Err(StoreError::TransactionCanceled { failed: Some(0) })
    ));
    store
        .transact(vec![delete(Condition::Exists)])
        .await
        .unwrap();
    assert!(store.get(&pk, "A", true).await.unwrap().is_none());
    // Deleting what is not there, unconditionally, is no failure.
    store.transact(vec![delete(Condition::None)]).await.unwrap();
}

/// A scan in small pages finds every live item exactly once, and no expired one.
async fn scan_walks_every_live_item_once(store: &dyn ItemStore, clock: &ManualClock) {
    let pk = unique("SCAN");
    for sk in ["a", "b", "c", "d", "e"] {
        store
            .put(item(&pk, sk, "x"), Condition::None)
            .await
            .unwrap();
    }
    let gone = item(&pk, "f", "x").expiring_at(clock.unix() - 1);
    store.put(gone, Condition::None).await.unwrap();
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.scan(cursor, 2).await.unwrap();
        seen.extend(page.items.into_iter().filter(|i| i.pk == pk).map(|i| i.sk));
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen, ["a", "b", "c", "d", "e"]);
    assert!(store.scan(Some("not a cursor".into()), 2).await.is_err());
}

async fn put_then_get_round_trips_every_field(store: &dyn ItemStore) {
    let pk = unique("ROUNDTRIP");
    let mut written = item(&pk, "A", "{\"x\":1}")
        .with_gsi1(unique("G1"), "s1")
        .with_gsi2(unique("G2"), "s2")
        .with_version(7)
        .expiring_at(4_102_444_800);
    store.put(written.clone(), Condition::None).await.unwrap();
    let read = store
        .get(&pk, "A", true)
        .await
        .unwrap()
        .expect("item written");
    written.counter = None;
    assert_eq!(read, written);
    assert!(store.get(&pk, "B", true).await.unwrap().is_none());
}

async fn conditional_put_not_exists_refuses_a_second_writer(store: &dyn ItemStore) {
    let pk = unique("UNIQUE");
    store
        .put(item(&pk, "A", "first"), Condition::NotExists)
        .await
        .unwrap();
    let second = store
        .put(item(&pk, "A", "second"), Condition::NotExists)
        .await;
    assert!(
        matches!(second, Err(StoreError::ConditionFailed)),
        "{second:?}"
    );
    let read = store.get(&pk, "A", true).await.unwrap().unwrap();
    assert_eq!(read.data, b"first");
    // Exists on a missing key fails; on a present key succeeds.
    let missing = store.put(item(&pk, "B", "x"), Condition::Exists).await;
    assert!(matches!(missing, Err(StoreError::ConditionFailed)));
    store
        .put(item(&pk, "A", "third"), Condition::Exists)
        .await
        .unwrap();
}

async fn version_condition_detects_lost_updates(store: &dyn ItemStore) {
    let pk = unique("VERSION");
    store
        .put(item(&pk, "A", "v1"), Condition::NotExists)
        .await
        .unwrap();
    store
        .put(item(&pk, "A", "v2").with_version(2), Condition::Version(1))
        .await
        .unwrap();
    // A writer still holding version 1 loses.
    let stale = store
        .put(item(&pk, "A", "v2b").with_version(2), Condition::Version(1))
        .await;
    assert!(matches!(stale, Err(StoreError::ConditionFailed)));
    let read = store.get(&pk, "A", true).await.unwrap().unwrap();
    assert_eq!((read.data.as_slice(), read.version), (&b"v2"[..], 2));
}

async fn delete_honours_conditions_and_reports_existence(store: &dyn ItemStore) {
    let pk = unique("DELETE");
    store
        .put(item(&pk, "A", "x").with_version(3), Condition::None)
        .await
        .unwrap();
    let wrong = store.delete(&pk, "A", Condition::Version(2)).await;
    assert!(matches!(wrong, Err(StoreError::ConditionFailed)));
    assert!(store.delete(&pk, "A", Condition::Version(3)).await.unwrap());
    assert!(!store.delete(&pk, "A", Condition::None).await.unwrap());
    let gone = store.delete(&pk, "A", Condition::Exists).await;
    assert!(matches!(gone, Err(StoreError::ConditionFailed)));
}

async fn query_pages_in_order_with_prefix_and_cursor(store: &dyn ItemStore) {
    let pk = unique("QUERY");
    for i in (0..25).rev() {
        store
            .put(item(&pk, &format!("ITEM#{i:03}"), "x"), Condition::None)
            .await
            .unwrap();
    }
    store
        .put(item(&pk, "OTHER#1", "x"), Condition::None)
        .await
        .unwrap();
    store
        .put(item(&pk, "ITEL", "x"), Condition::None)
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = store
            .query(
                Query::partition(&pk)
                    .prefix("ITEM#")
                    .limit(10)
                    .after(cursor),
            )
            .await
            .unwrap();
        assert!(page.items.len() <= 10);
        pages += 1;
        seen.extend(page.items.into_iter().map(|i| i.sk));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
        assert!(pages < 10, "cursor never ends");
    }
    let expected: Vec<String> = (0..25).map(|i| format!("ITEM#{i:03}")).collect();
    assert_eq!(seen, expected);
    let everything = query_all(store, Query::partition(&pk)).await.unwrap();
    assert_eq!(everything.len(), 27);
    let empty = store
        .query(Query::partition(unique("EMPTY")))
        .await
        .unwrap();
    assert!(empty.items.is_empty() && empty.cursor.is_none());
    let bad = store
        .query(Query::partition(&pk).after(Some("not a cursor!".into())))
        .await;
    assert!(bad.is_err(), "a malformed cursor must be refused");
}

async fn query_ranges_and_descending_order(store: &dyn ItemStore) {
    let pk = unique("RANGE");
    for sk in ["a", "b", "c", "d", "e"] {
        store
            .put(item(&pk, sk, "x"), Condition::None)
            .await
            .unwrap();
    }
    let keys = |items: Vec<Item>| items.into_iter().map(|i| i.sk).collect::<Vec<_>>();
    let mut q = Query::partition(&pk);
    q.sort = SortKey::Between("b".into(), "d".into());
    assert_eq!(
        keys(query_all(store, q.clone()).await.unwrap()),
        ["b", "c", "d"]
    );
    assert_eq!(
        keys(query_all(store, q.descending()).await.unwrap()),
        ["d", "c", "b"]
    );
    let mut q = Query::partition(&pk);
    q.sort = SortKey::AtLeast("d".into());
    assert_eq!(keys(query_all(store, q).await.unwrap()), ["d", "e"]);
    let mut q = Query::partition(&pk);
    q.sort = SortKey::AtMost("b".into());
    assert_eq!(keys(query_all(store, q).await.unwrap()), ["a", "b"]);
    // Descending pagination keeps order across pages.
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .query(Query::partition(&pk).descending().limit(2).after(cursor))
            .await
            .unwrap();
        seen.extend(keys(page.items));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["e", "d", "c", "b", "a"]);
}

async fn secondary_indexes_are_queryable(store: &dyn ItemStore) {
    let g1 = unique("IDX1");
    let g2 = unique("IDX2");
    for i in 0..7 {
        let it = item(&unique("OWNER"), "META", "x")
            .with_gsi1(&g1, format!("{:02}", 10 - i))
            .with_gsi2(&g2, "same");
        store.put(it, Condition::None).await.unwrap();
    }
    let mut found = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .query(Query::partition(&g1).on(Index::Gsi1).limit(3).after(cursor))
            .await
            .unwrap();
        found.extend(page.items.into_iter().map(|i| i.gsi1.unwrap().sk));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(found, ["04", "05", "06", "07", "08", "09", "10"]);
    // Equal index sort keys still page without loss or repetition.
    let mut owners = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .query(Query::partition(&g2).on(Index::Gsi2).limit(2).after(cursor))
            .await
            .unwrap();
        owners.extend(page.items.into_iter().map(|i| i.pk));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    owners.sort();
    owners.dedup();
    assert_eq!(owners.len(), 7);
}

async fn transaction_applies_all_ops(store: &dyn ItemStore) {
    let pk = unique("TXN");
    store
        .put(item(&pk, "DEL", "x"), Condition::None)
        .await
        .unwrap();
    store
        .put(item(&pk, "CHECK", "x").with_version(5), Condition::None)
        .await
        .unwrap();
    store
        .transact(vec![
            WriteOp::Put {
                item: item(&pk, "NEW", "n"),
                condition: Condition::NotExists,
            },
            WriteOp::Delete {
                pk: pk.clone(),
                sk: "DEL".into(),
                condition: Condition::Exists,
            },
            WriteOp::Check {
                pk: pk.clone(),
                sk: "CHECK".into(),
                condition: Condition::Version(5),
            },
        ])
        .await
        .unwrap();
    assert!(store.get(&pk, "NEW", true).await.unwrap().is_some());
    assert!(store.get(&pk, "DEL", true).await.unwrap().is_none());
}

async fn transaction_that_fails_changes_nothing(store: &dyn ItemStore) {
    let pk = unique("TXNFAIL");
    store
        .put(item(&pk, "TAKEN", "x"), Condition::None)
        .await
        .unwrap();
    store
        .put(item(&pk, "KEEP", "x"), Condition::None)
        .await
        .unwrap();
    let result = store
        .transact(vec![
            WriteOp::Put {
                item: item(&pk, "A", "a"),
                condition: Condition::NotExists,
            },
            WriteOp::Delete {
                pk: pk.clone(),
                sk: "KEEP".into(),
                condition: Condition::None,
            },
            WriteOp::Put {
                item: item(&pk, "TAKEN", "b"),
                condition: Condition::NotExists,
            },
        ])
        .await;
    match result {
        Err(StoreError::TransactionCanceled { failed }) => assert_eq!(failed, Some(2)),
        other => panic!("expected TransactionCanceled, got {other:?}"),
    }
    assert!(
        store.get(&pk, "A", true).await.unwrap().is_none(),
        "first op rolled back"
    );
    assert!(
        store.get(&pk, "KEEP", true).await.unwrap().is_some(),
        "delete rolled back"
    );
    assert_eq!(
        store.get(&pk, "TAKEN", true).await.unwrap().unwrap().data,
        b"x"
    );
}

async fn transaction_rejects_duplicate_keys(store: &dyn ItemStore) {
    let pk = unique("TXNDUP");
    let result = store
        .transact(vec![
            WriteOp::Put {
                item: item(&pk, "A", "1"),
                condition: Condition::None,
            },
            WriteOp::Delete {
                pk: pk.clone(),
                sk: "A".into(),
                condition: Condition::None,
            },
        ])
        .await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    let too_many: Vec<WriteOp> = (0..101)
        .map(|i| WriteOp::Put {
            item: item(&pk, &format!("K{i}"), "x"),
            condition: Condition::None,
        })
        .collect();
    assert!(matches!(
        store.transact(too_many).await,
        Err(StoreError::Invalid(_))
    ));
}

async fn counters_are_atomic_under_concurrency(store: Arc<dyn ItemStore>) {
    let pk = unique("COUNTER");
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let store = Arc::clone(&store);
            let pk = pk.clone();
            tokio::spawn(async move { store.increment(&pk, "N", 1, None).await.unwrap() })
        })
        .collect();
    let mut values = Vec::new();
    for t in tasks {
        values.push(t.await.unwrap());
    }
    values.sort_unstable();
    assert_eq!(
        values,
        (1..=20).collect::<Vec<i64>>(),
        "every increment saw a distinct value"
    );
    assert_eq!(store.increment(&pk, "N", 5, None).await.unwrap(), 25);
    assert_eq!(
        store.get(&pk, "N", true).await.unwrap().unwrap().counter,
        Some(25)
    );
}

async fn racing_conditional_puts_have_exactly_one_winner(store: Arc<dyn ItemStore>) {
    let pk = unique("RACE");
    store
        .put(item(&pk, "DOC", "v1"), Condition::NotExists)
        .await
        .unwrap();
    let writers: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            let pk = pk.clone();
            tokio::spawn(async move {
                store
                    .put(
                        item(&pk, "DOC", &format!("writer{i}")).with_version(2),
                        Condition::Version(1),
                    )
                    .await
            })
        })
        .collect();
    let mut wins = 0;
    for w in writers {
        match w.await.unwrap() {
            Ok(()) => wins += 1,
            Err(StoreError::ConditionFailed) => {}
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }
    assert_eq!(wins, 1, "exactly one writer may win a version race");
}

async fn expired_items_are_invisible(store: &dyn ItemStore, clock: &ManualClock) {
    let pk = unique("TTL");
    let soon = clock.unix() + 60;
    store
        .put(
            item(&pk, "A", "x").expiring_at(soon).with_gsi1(&pk, "a"),
            Condition::None,
        )
        .await
        .unwrap();
    store
        .put(item(&pk, "B", "x"), Condition::None)
        .await
        .unwrap();
    assert!(store.get(&pk, "A", true).await.unwrap().is_some());
    clock.advance(Duration::seconds(61));
    assert!(store.get(&pk, "A", true).await.unwrap().is_none());
    let listed = query_all(store, Query::partition(&pk)).await.unwrap();
    assert_eq!(
        listed.iter().map(|i| i.sk.as_str()).collect::<Vec<_>>(),
        ["B"]
    );
    let indexed = query_all(store, Query::partition(&pk).on(Index::Gsi1))
        .await
        .unwrap();
    assert!(indexed.is_empty());
    // An expired item counts as absent for conditions.
    store
        .put(item(&pk, "A", "fresh"), Condition::NotExists)
        .await
        .unwrap();
    let expired_pk = unique("TTL2");
    store
        .put(
            item(&expired_pk, "A", "x").expiring_at(clock.unix() + 1),
            Condition::None,
        )
        .await
        .unwrap();
    clock.advance(Duration::seconds(2));
    let exists = store
        .put(item(&expired_pk, "A", "y"), Condition::Exists)
        .await;
    assert!(matches!(exists, Err(StoreError::ConditionFailed)));
}

async fn expired_counters_restart(store: &dyn ItemStore, clock: &ManualClock) {
    let pk = unique("WINDOW");
    let end = clock.unix() + 30;
    assert_eq!(store.increment(&pk, "W", 1, Some(end)).await.unwrap(), 1);
    // A later increment does not move the window's end.
    assert_eq!(
        store
            .increment(&pk, "W", 1, Some(end + 1000))
            .await
            .unwrap(),
        2
    );
    clock.advance(Duration::seconds(31));
    assert_eq!(
        store
            .increment(&pk, "W", 1, Some(clock.unix() + 30))
            .await
            .unwrap(),
        1
    );
}
