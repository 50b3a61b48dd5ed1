//! The journal schema, exercised in a real IndexedDB inside a dedicated worker
//! of headless Chromium (where the controller runs in production).

use idb::Factory;
use js_sys::{Object, Reflect};
use lifeline_controller::journal::{self, store, JournalError, SCHEMA_VERSION};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn record(fields: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (name, value) in fields {
        Reflect::set(&object, &JsValue::from_str(name), value).unwrap();
    }
    object.into()
}

fn field(record: &JsValue, name: &str) -> JsValue {
    Reflect::get(record, &JsValue::from_str(name)).unwrap()
}

async fn fresh(name: &str) {
    Factory::new().unwrap().delete(name).unwrap().await.unwrap();
}

#[wasm_bindgen_test]
async fn a_fresh_database_gets_every_store_of_the_current_schema() {
    let name = "lifeline-test-fresh";
    fresh(name).await;
    let database = journal::open(name).await.unwrap();
    assert_eq!(database.version().unwrap(), SCHEMA_VERSION);
    let mut names = database.store_names();
    names.sort();
    let mut expected: Vec<String> = store::ALL.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(names, expected);
    database.close();
}

#[wasm_bindgen_test]
async fn a_command_record_is_written_and_read_back_through_the_schema() {
    let name = "lifeline-test-roundtrip";
    fresh(name).await;
    let database = journal::open(name).await.unwrap();
    let command = record(&[
        ("command_id", "01JD0000000000000000000001".into()),
        ("outcome", "admitted".into()),
        ("line", "echo hello".into()),
    ]);
    journal::put_all(&database, store::COMMANDS, &[command])
        .await
        .unwrap();
    database.close();

    // A second connection proves the write reached the store, not a cache.
    let database = journal::open(name).await.unwrap();
    let read = journal::get(
        &database,
        store::COMMANDS,
        &"01JD0000000000000000000001".into(),
    )
    .await
    .unwrap()
    .expect("the record is there after reopening");
    assert_eq!(field(&read, "outcome").as_string().unwrap(), "admitted");
    assert_eq!(field(&read, "line").as_string().unwrap(), "echo hello");
    assert!(journal::get(&database, store::COMMANDS, &"missing".into())
        .await
        .unwrap()
        .is_none());
    database.close();
}

#[wasm_bindgen_test]
async fn events_are_keyed_by_command_and_sequence() {
    let name = "lifeline-test-events";
    fresh(name).await;
    let database = journal::open(name).await.unwrap();
    let event = |seq: u32, text: &str| {
        record(&[
            ("command_id", "c1".into()),
            ("seq", seq.into()),
            ("text", text.into()),
        ])
    };
    // Writing the same key twice keeps one record: a duplicate event from a
    // reattached runtime cannot appear twice in the journal.
    journal::put_all(
        &database,
        store::EVENTS,
        &[event(1, "a"), event(2, "b"), event(2, "b")],
    )
    .await
    .unwrap();
    let key = js_sys::Array::of2(&"c1".into(), &2.into());
    let read = journal::get(&database, store::EVENTS, &key.into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(field(&read, "text").as_string().unwrap(), "b");
    database.close();
}

#[wasm_bindgen_test]
async fn a_database_from_a_newer_build_is_refused_not_misread() {
    let name = "lifeline-test-newer";
    fresh(name).await;
    let newer = Factory::new()
        .unwrap()
        .open(name, Some(SCHEMA_VERSION + 1))
        .unwrap()
        .await
        .unwrap();
    newer.close();
    let error = journal::open(name).await.unwrap_err();
    assert_eq!(error, JournalError::NewerSchema);
    assert!(error.to_string().contains("newer Lifeline"));
}
