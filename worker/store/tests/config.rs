//! The profile and credential store, exercised in a real IndexedDB and real
//! WebCrypto inside a dedicated worker of headless Chromium (where the
//! controller runs in production). Every test uses its own database and
//! deletes it at the end; records are tampered with through a second, raw
//! connection (the `idb` crate), the way a damaged disk or a partial
//! "clear site data" would leave them.

use idb::{Factory, KeyPath, TransactionMode};
use js_sys::{ArrayBuffer, Object, Reflect, Uint8Array};
use lifeline_core::profile::{
    resolve_for_resume, AgentBudget, Capabilities, CredentialFailure, EnvValue, EnvVar, Profile,
    ProfileBlock, ProfileLookup, Provider, Secret, Tool, OWNER,
};
use lifeline_core::store_fault::{StoreFault, StoredKind};
use lifeline_core::{CredentialId, ProfileId};
use lifeline_store::config::{
    limits, store, ConfigError, ConfigStore, CREDENTIAL_KEY_NAME, SCHEMA_VERSION,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Crypto, CryptoKey};

mod common;
use common::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

// ---------------------------------------------------------------------------
// Helpers

/// A fresh store in its own database.
async fn fresh(name: &str) -> ConfigStore {
    delete_db(name).await;
    ConfigStore::open_named(name).await.unwrap()
}

/// Closes the store and deletes its database.
async fn finish(store: ConfigStore, name: &str) {
    store.close();
    drop(store);
    delete_db(name).await;
}

fn pid(n: u128) -> ProfileId {
    id(n)
}

fn cid(n: u128) -> CredentialId {
    id(n)
}

/// A profile that uses every field.
fn full_profile(n: u128) -> Profile {
    Profile {
        id: pid(n),
        revision: 1,
        owner: OWNER.into(),
        name: "Local Ollama".into(),
        provider: Provider::OpenAiCompatible {
            base_url: "http://localhost:11434/v1".into(),
            model: "qwen2.5-coder".into(),
        },
        api_key: Some(cid(900)),
        env: vec![
            EnvVar {
                name: "GREETING".into(),
                value: EnvValue::Literal("hello".into()),
            },
            EnvVar {
                name: "GITHUB_TOKEN".into(),
                value: EnvValue::Secret(cid(901)),
            },
        ],
        capabilities: Capabilities {
            tools: [Tool::ReadFile, Tool::ListFiles].into_iter().collect(),
            js: true,
        },
        budget: AgentBudget {
            max_steps: 3,
            max_commands: 4,
            max_tokens: 5_000,
            max_wall_ms: 60_000,
            ..AgentBudget::default()
        },
    }
}

/// A profile record exactly as the store writes one, for planting.
fn profile_record(id_text: &str, json: &str) -> JsValue {
    object(&[
        ("v", 1.into()),
        ("id", id_text.into()),
        ("json", json.into()),
    ])
}

fn crypto() -> Crypto {
    Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))
        .unwrap()
        .unchecked_into()
}

fn bytes_of(buffer: &JsValue) -> Vec<u8> {
    Uint8Array::new(buffer).to_vec()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn malformed_reason(result: Result<Secret, CredentialFailure>) -> String {
    match result {
        Err(CredentialFailure::Malformed { reason }) => reason,
        Err(other) => panic!("expected Malformed, got {other:?}"),
        Ok(_) => panic!("expected Malformed, the secret was returned"),
    }
}

const PLANTED: &str = "sk-PLANTED-7f3a9c1e5b2d4068";

// ---------------------------------------------------------------------------
// Schema and connection

#[wasm_bindgen_test]
async fn a_fresh_database_gets_the_three_keyed_stores_of_schema_1() {
    let name = "lifeline-config-test-fresh";
    let config = fresh(name).await;
    assert_eq!(config.version(), 1);
    config.close();

    let db = raw(name).await;
    let mut names = db.store_names();
    names.sort();
    let mut expected: Vec<String> = store::ALL.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(names, expected);
    let tx = db
        .transaction(&store::ALL, TransactionMode::ReadOnly)
        .unwrap();
    for (s, path) in [
        (store::PROFILES, "id"),
        (store::CREDENTIALS, "id"),
        (store::KEYS, "name"),
    ] {
        assert_eq!(
            tx.object_store(s).unwrap().key_path().unwrap(),
            Some(KeyPath::new_single(path)),
            "{s} is keyed by {path}"
        );
    }
    db.close();
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_database_from_a_newer_build_is_refused_not_misread() {
    let name = "lifeline-config-test-newer";
    delete_db(name).await;
    let newer = Factory::new()
        .unwrap()
        .open(name, Some(SCHEMA_VERSION + 1))
        .unwrap()
        .await
        .unwrap();
    newer.close();
    let error = ConfigStore::open_named(name).await.unwrap_err();
    assert_eq!(error, ConfigError::NewerSchema);
    assert!(error.to_string().contains("newer Lifeline"));
    delete_db(name).await;
}

#[wasm_bindgen_test]
async fn another_tab_upgrading_closes_our_connection_and_tells_us() {
    let name = "lifeline-config-test-versionchange";
    let config = fresh(name).await;
    let told = std::rc::Rc::new(std::cell::Cell::new(false));
    let seen = told.clone();
    config.on_version_change(move || seen.set(true));
    // A "newer build" opens at the next version; we do not block it.
    let newer = Factory::new()
        .unwrap()
        .open(name, Some(SCHEMA_VERSION + 1))
        .unwrap()
        .await
        .unwrap();
    assert!(told.get());
    assert_eq!(
        config.put_profile(&Profile::built_in(pid(1))).await,
        Err(ConfigError::VersionChange)
    );
    match config.lookup_profile(pid(1)).await {
        ProfileLookup::Failed { fault } => assert_eq!(fault, StoreFault::VersionChange),
        other => panic!("a closed store must not answer Deleted: {other:?}"),
    }
    assert_eq!(
        config.resolve_credential(cid(1)).await,
        Err(CredentialFailure::Store {
            fault: StoreFault::VersionChange
        })
    );
    newer.close();
    finish(config, name).await;
}

// ---------------------------------------------------------------------------
// Profiles

#[wasm_bindgen_test]
async fn a_profile_round_trips_and_an_edit_with_a_higher_revision_replaces_it() {
    let name = "lifeline-config-test-profile-round-trip";
    let config = fresh(name).await;
    let profile = full_profile(1);
    config.put_profile(&profile).await.unwrap();
    assert_eq!(
        config.lookup_profile(profile.id).await,
        ProfileLookup::Found(profile.clone())
    );

    // The raw record: versioned, keyed by the ULID text, JSON inside.
    let record = raw_get(name, store::PROFILES, &profile.id.to_string())
        .await
        .unwrap();
    assert_eq!(field(&record, "v").as_f64(), Some(1.0));
    assert_eq!(
        field(&record, "id").as_string(),
        Some(profile.id.to_string())
    );

    let mut edited = profile.clone();
    edited.revision = 2;
    edited.name = "Local Ollama (big model)".into();
    config.put_profile(&edited).await.unwrap();
    assert_eq!(
        config.lookup_profile(profile.id).await,
        ProfileLookup::Found(edited.clone())
    );
    let built_in = Profile::built_in(pid(2));
    config.put_profile(&built_in).await.unwrap();
    assert_eq!(
        config.list_profiles().await.unwrap(),
        vec![Ok(edited), Ok(built_in)]
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_stale_revision_is_refused_so_an_update_is_never_lost() {
    let name = "lifeline-config-test-stale";
    let config = fresh(name).await;
    let mut profile = full_profile(1);
    profile.revision = 5;
    config.put_profile(&profile).await.unwrap();

    for offered in [5, 4, 1] {
        let mut stale = profile.clone();
        stale.revision = offered;
        stale.name = "an edit based on an old copy".into();
        let error = config.put_profile(&stale).await.unwrap_err();
        assert_eq!(
            error,
            ConfigError::StaleRevision {
                id: profile.id,
                stored: 5,
                offered
            }
        );
        assert!(error.to_string().contains("reload the profile"), "{error}");
    }
    // Nothing of the refused edits was written.
    assert_eq!(
        config.lookup_profile(profile.id).await,
        ProfileLookup::Found(profile.clone())
    );
    profile.revision = 6;
    config.put_profile(&profile).await.unwrap();
    assert_eq!(
        config.lookup_profile(profile.id).await,
        ProfileLookup::Found(profile)
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn an_invalid_profile_is_refused_before_anything_is_written() {
    let name = "lifeline-config-test-invalid-profile";
    let config = fresh(name).await;
    let mut profile = full_profile(1);
    profile.env.push(EnvVar {
        name: "PWD".into(),
        value: EnvValue::Literal("/".into()),
    });
    let error = config.put_profile(&profile).await.unwrap_err();
    assert!(matches!(error, ConfigError::InvalidProfile(_)), "{error:?}");
    assert!(error.to_string().contains("PWD"), "{error}");

    let mut other = Profile::built_in(pid(2));
    other.owner = "someone-else".into();
    assert!(matches!(
        config.put_profile(&other).await,
        Err(ConfigError::InvalidProfile(_))
    ));
    assert_eq!(raw_count(name, store::PROFILES).await, 0);
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_deleted_profile_looks_up_as_deleted() {
    let name = "lifeline-config-test-deleted-profile";
    let config = fresh(name).await;
    let profile = full_profile(1);
    assert_eq!(
        config.lookup_profile(profile.id).await,
        ProfileLookup::Deleted
    );
    config.put_profile(&profile).await.unwrap();
    config.delete_profile(profile.id).await.unwrap();
    assert_eq!(
        config.lookup_profile(profile.id).await,
        ProfileLookup::Deleted
    );
    // Deleting again is not an error; the list is empty.
    config.delete_profile(profile.id).await.unwrap();
    assert!(config.list_profiles().await.unwrap().is_empty());
    // The core lets a resume go on without it.
    let launch = resolve_for_resume(
        Some(&profile.reference()),
        config.lookup_profile(profile.id).await,
    )
    .unwrap();
    assert!(launch.profile.is_none());
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_corrupt_profile_record_fails_lookup_and_is_listed_as_an_error() {
    let name = "lifeline-config-test-corrupt-profile";
    let config = fresh(name).await;
    let good = full_profile(1);
    config.put_profile(&good).await.unwrap();

    let mut bad_revision: serde_json::Value = serde_json::to_value(full_profile(3)).unwrap();
    bad_revision["revision"] = serde_json::Value::String(PLANTED.into());
    let mut invalid = full_profile(4);
    invalid.provider = Provider::Anthropic {
        base_url: "ftp://nowhere".into(),
        model: "m".into(),
    };
    let junk = [
        // Not JSON.
        (pid(2), profile_record(&pid(2).to_string(), "{not json")),
        // A field of the wrong type, holding text that must not be quoted.
        (
            pid(3),
            profile_record(&pid(3).to_string(), &bad_revision.to_string()),
        ),
        // Decodes but fails validation.
        (
            pid(4),
            profile_record(
                &pid(4).to_string(),
                &serde_json::to_string(&invalid).unwrap(),
            ),
        ),
        // A record version from the future.
        (
            pid(5),
            object(&[
                ("v", 2.into()),
                ("id", pid(5).to_string().into()),
                (
                    "json",
                    serde_json::to_string(&full_profile(5)).unwrap().into(),
                ),
            ]),
        ),
        // Another profile's JSON under this key.
        (
            pid(6),
            profile_record(
                &pid(6).to_string(),
                &serde_json::to_string(&full_profile(7)).unwrap(),
            ),
        ),
        // No json at all.
        (
            pid(8),
            object(&[("id", pid(8).to_string().into()), ("junk", 42.into())]),
        ),
    ];
    let values: Vec<JsValue> = junk.iter().map(|(_, v)| v.clone()).collect();
    raw_put(name, store::PROFILES, &values).await;
    // And a record whose key is not even a profile id.
    raw_put(
        name,
        store::PROFILES,
        &[object(&[("id", "junk".into()), ("v", 1.into())])],
    )
    .await;

    for (profile_id, _) in &junk {
        match config.lookup_profile(*profile_id).await {
            ProfileLookup::Failed {
                fault: StoreFault::Corrupt { detail },
            } => {
                assert!(!detail.contains(PLANTED), "{detail}");
                assert!(!detail.is_empty());
            }
            other => panic!("{profile_id}: expected Failed, got {other:?}"),
        }
    }
    // The core blocks a resume on it instead of going on without it.
    let blocked = resolve_for_resume(
        Some(&full_profile(2).reference()),
        config.lookup_profile(pid(2)).await,
    )
    .unwrap_err();
    assert!(matches!(
        blocked,
        ProfileBlock::Store {
            fault: StoreFault::Corrupt { .. }
        }
    ));

    let listed = config.list_profiles().await.unwrap();
    assert_eq!(listed.len(), 1 + junk.len() + 1, "nothing dropped silently");
    assert_eq!(listed[0], Ok(good.clone()));
    let errors: Vec<&String> = listed.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), junk.len() + 1);
    for detail in &errors {
        assert!(detail.starts_with("profile record "), "{detail}");
        assert!(!detail.contains(PLANTED), "{detail}");
    }
    assert!(errors.iter().any(|d| d.contains("\"junk\"")), "{errors:?}");
    assert!(errors.iter().any(|d| d.contains("newer Lifeline")));
    assert!(errors.iter().any(|d| d.contains("base URL")));

    // A repair overwrites an unreadable record whose revision is unknown.
    let repaired = full_profile(2);
    config.put_profile(&repaired).await.unwrap();
    assert_eq!(
        config.lookup_profile(repaired.id).await,
        ProfileLookup::Found(repaired)
    );
    // A record that is unreadable but whose revision is readable is still
    // protected against a stale overwrite.
    let mut stale = full_profile(4);
    stale.revision = 1;
    assert!(matches!(
        config.put_profile(&stale).await,
        Err(ConfigError::StaleRevision { stored: 1, .. })
    ));
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn another_owners_profile_comes_back_found_with_that_owner_and_blocks_a_resume() {
    let name = "lifeline-config-test-other-owner";
    let config = fresh(name).await;
    let mut foreign = full_profile(1);
    foreign.owner = "lifeline-desktop".into();
    raw_put(
        name,
        store::PROFILES,
        &[profile_record(
            &foreign.id.to_string(),
            &serde_json::to_string(&foreign).unwrap(),
        )],
    )
    .await;
    let lookup = config.lookup_profile(foreign.id).await;
    assert_eq!(lookup, ProfileLookup::Found(foreign.clone()));
    assert_eq!(
        resolve_for_resume(Some(&foreign.reference()), lookup).unwrap_err(),
        ProfileBlock::OtherOwner {
            owner: "lifeline-desktop".into()
        }
    );
    assert_eq!(
        config.list_profiles().await.unwrap(),
        vec![Ok(foreign.clone())]
    );
    // It is never picked as the default.
    let default = config.ensure_default_profile(pid(2)).await.unwrap();
    assert_eq!(default, Profile::built_in(pid(2)));
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn the_default_profile_is_created_once_and_a_built_in_one_is_preferred() {
    let name = "lifeline-config-test-default";
    let config = fresh(name).await;
    let first = config.ensure_default_profile(pid(10)).await.unwrap();
    assert_eq!(first, Profile::built_in(pid(10)));
    assert_eq!(
        config.lookup_profile(pid(10)).await,
        ProfileLookup::Found(first.clone())
    );
    // Later calls return it and store nothing new.
    assert_eq!(config.ensure_default_profile(pid(11)).await.unwrap(), first);
    assert_eq!(raw_count(name, store::PROFILES).await, 1);

    // With a non-built-in profile earlier in id order, the built-in wins.
    config.put_profile(&full_profile(1)).await.unwrap();
    assert_eq!(config.ensure_default_profile(pid(12)).await.unwrap(), first);
    // Without any built-in, the first readable profile of ours is used.
    config.delete_profile(pid(10)).await.unwrap();
    assert_eq!(
        config.ensure_default_profile(pid(13)).await.unwrap(),
        full_profile(1)
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn with_only_unreadable_profiles_a_default_is_added_beside_them() {
    let name = "lifeline-config-test-default-unreadable";
    let config = fresh(name).await;
    raw_put(
        name,
        store::PROFILES,
        &[profile_record(&pid(1).to_string(), "{not json")],
    )
    .await;
    let default = config.ensure_default_profile(pid(2)).await.unwrap();
    assert_eq!(default, Profile::built_in(pid(2)));
    let listed = config.list_profiles().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed[0].is_err(), "the unreadable record is kept");
    assert_eq!(listed[1], Ok(default));
    finish(config, name).await;
}

// ---------------------------------------------------------------------------
// Credentials

#[wasm_bindgen_test]
async fn a_credential_round_trips_and_lists_by_id_and_label_only() {
    let name = "lifeline-config-test-credential-round-trip";
    let config = fresh(name).await;
    let secret = Secret::new(format!("{PLANTED}-ünïcödé"));
    config
        .put_credential(cid(1), "OpenAI key", &secret)
        .await
        .unwrap();
    config
        .put_credential(cid(2), "GitHub token", &Secret::new("ghp_other".into()))
        .await
        .unwrap();
    assert_eq!(config.resolve_credential(cid(1)).await, Ok(secret.clone()));
    assert_eq!(
        config.resolve_credential(cid(2)).await.unwrap().expose(),
        "ghp_other"
    );
    assert_eq!(
        config.credential_label(cid(1)).await.unwrap().as_deref(),
        Some("OpenAI key")
    );
    assert_eq!(config.credential_label(cid(3)).await.unwrap(), None);
    assert_eq!(
        config.list_credentials().await.unwrap(),
        vec![
            (cid(1), "OpenAI key".to_string()),
            (cid(2), "GitHub token".to_string())
        ]
    );

    // Entering the key again replaces the secret and keeps created_ms.
    let created = field(
        &raw_get(name, store::CREDENTIALS, &cid(1).to_string())
            .await
            .unwrap(),
        "created_ms",
    )
    .as_f64()
    .unwrap();
    let replaced = Secret::new("sk-new".into());
    config
        .put_credential(cid(1), "OpenAI key (rotated)", &replaced)
        .await
        .unwrap();
    assert_eq!(config.resolve_credential(cid(1)).await, Ok(replaced));
    let record = raw_get(name, store::CREDENTIALS, &cid(1).to_string())
        .await
        .unwrap();
    assert_eq!(field(&record, "created_ms").as_f64(), Some(created));
    assert_eq!(
        field(&record, "label").as_string().as_deref(),
        Some("OpenAI key (rotated)")
    );

    config.delete_credential(cid(1)).await.unwrap();
    config.delete_credential(cid(1)).await.unwrap();
    assert_eq!(
        config.resolve_credential(cid(1)).await,
        Err(CredentialFailure::Missing)
    );
    assert_eq!(
        config.list_credentials().await.unwrap(),
        vec![(cid(2), "GitHub token".to_string())]
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn the_record_at_rest_holds_ciphertext_not_the_secret_under_a_fresh_iv_each_write() {
    let name = "lifeline-config-test-at-rest";
    let config = fresh(name).await;
    let secret = Secret::new(PLANTED.into());
    config
        .put_credential(cid(1), "planted", &secret)
        .await
        .unwrap();
    let first = raw_get(name, store::CREDENTIALS, &cid(1).to_string())
        .await
        .unwrap();
    assert_eq!(field(&first, "v").as_f64(), Some(1.0));
    assert_eq!(field(&first, "id").as_string(), Some(cid(1).to_string()));
    assert!(field(&first, "created_ms").as_f64().unwrap() > 0.0);
    let iv = field(&first, "iv").dyn_into::<Uint8Array>().unwrap();
    assert_eq!(iv.length(), 12);
    let ciphertext = field(&first, "ciphertext");
    assert!(ciphertext.is_instance_of::<ArrayBuffer>());
    let sealed = bytes_of(&ciphertext);
    assert_eq!(
        sealed.len(),
        PLANTED.len() + 16,
        "ciphertext plus the GCM tag"
    );
    assert!(!contains(&sealed, PLANTED.as_bytes()));
    // No other field carries it either (the record as JSON, minus buffers).
    let keys: Vec<String> = Object::keys(first.unchecked_ref::<Object>())
        .iter()
        .map(|k| k.as_string().unwrap())
        .collect();
    let mut expected = vec!["v", "id", "label", "created_ms", "iv", "ciphertext"];
    expected.sort();
    let mut found: Vec<&str> = keys.iter().map(String::as_str).collect();
    found.sort();
    assert_eq!(found, expected);
    for k in ["v", "id", "label", "created_ms"] {
        let text = format!("{:?}", field(&first, k));
        assert!(!text.contains(PLANTED), "{k}");
    }

    // The same secret written again: a new IV, so a different ciphertext.
    config
        .put_credential(cid(1), "planted", &secret)
        .await
        .unwrap();
    let second = raw_get(name, store::CREDENTIALS, &cid(1).to_string())
        .await
        .unwrap();
    assert_ne!(bytes_of(&field(&second, "iv")), iv.to_vec());
    assert_ne!(bytes_of(&field(&second, "ciphertext")), sealed);
    assert_eq!(config.resolve_credential(cid(1)).await, Ok(secret));
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn the_wrapping_key_is_stored_non_extractable_and_export_key_rejects() {
    let name = "lifeline-config-test-key";
    let config = fresh(name).await;
    assert!(raw_get(name, store::KEYS, CREDENTIAL_KEY_NAME)
        .await
        .is_none());
    config
        .put_credential(cid(1), "k", &Secret::new(PLANTED.into()))
        .await
        .unwrap();
    let record = raw_get(name, store::KEYS, CREDENTIAL_KEY_NAME)
        .await
        .expect("the key is generated on the first credential write");
    assert_eq!(
        field(&record, "name").as_string().as_deref(),
        Some(CREDENTIAL_KEY_NAME)
    );
    let key: CryptoKey = field(&record, "key").dyn_into().unwrap();
    assert!(!key.extractable());
    assert_eq!(key.type_(), "secret");
    let algorithm = key.algorithm().unwrap();
    assert_eq!(
        field(&algorithm, "name").as_string().as_deref(),
        Some("AES-GCM")
    );
    assert_eq!(field(&algorithm, "length").as_f64(), Some(256.0));
    for format in ["raw", "jwk"] {
        let exported = match crypto().subtle().export_key(format, &key) {
            Ok(promise) => JsFuture::from(promise).await,
            Err(e) => Err(e),
        };
        let error = exported.expect_err("a non-extractable key cannot be exported");
        assert_eq!(
            error
                .dyn_ref::<web_sys::DomException>()
                .map(|e| e.name())
                .as_deref(),
            Some("InvalidAccessError"),
            "{format}"
        );
    }
    // A second credential reuses the key rather than making another.
    config
        .put_credential(cid(2), "k2", &Secret::new("x".into()))
        .await
        .unwrap();
    assert_eq!(raw_count(name, store::KEYS).await, 1);
    assert_eq!(
        config.resolve_credential(cid(1)).await.unwrap().expose(),
        PLANTED
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_ciphertext_moved_to_another_record_does_not_decrypt() {
    let name = "lifeline-config-test-aad";
    let config = fresh(name).await;
    config
        .put_credential(cid(1), "one", &Secret::new("secret-one".into()))
        .await
        .unwrap();
    config
        .put_credential(cid(2), "two", &Secret::new("secret-two".into()))
        .await
        .unwrap();
    let one = raw_get(name, store::CREDENTIALS, &cid(1).to_string())
        .await
        .unwrap();
    let two = raw_get(name, store::CREDENTIALS, &cid(2).to_string())
        .await
        .unwrap();
    // Swap the sealed parts (IV and ciphertext together, so only the
    // additional data — the id — differs).
    let (iv1, ct1) = (field(&one, "iv"), field(&one, "ciphertext"));
    set_field(&one, "iv", &field(&two, "iv"));
    set_field(&one, "ciphertext", &field(&two, "ciphertext"));
    set_field(&two, "iv", &iv1);
    set_field(&two, "ciphertext", &ct1);
    raw_put(name, store::CREDENTIALS, &[one, two]).await;

    for n in [1, 2] {
        assert_eq!(
            config.resolve_credential(cid(n)).await,
            Err(CredentialFailure::Undecryptable)
        );
    }
    // Copied (not swapped) into a third record: the same.
    let copy = raw_get(name, store::CREDENTIALS, &cid(1).to_string())
        .await
        .unwrap();
    set_field(&copy, "id", &cid(3).to_string().into());
    raw_put(name, store::CREDENTIALS, &[copy]).await;
    assert_eq!(
        config.resolve_credential(cid(3)).await,
        Err(CredentialFailure::Undecryptable)
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_lost_key_makes_credentials_unreadable_and_is_only_replaced_by_a_write() {
    let name = "lifeline-config-test-key-gone";
    let config = fresh(name).await;
    config
        .put_credential(cid(1), "old", &Secret::new("old-secret".into()))
        .await
        .unwrap();
    raw_delete(name, store::KEYS, CREDENTIAL_KEY_NAME).await;

    assert_eq!(
        config.resolve_credential(cid(1)).await,
        Err(CredentialFailure::KeyGone)
    );
    // Resolving generated nothing.
    assert_eq!(raw_count(name, store::KEYS).await, 0);
    // The label is still there for the user to see what to re-enter.
    assert_eq!(
        config.list_credentials().await.unwrap(),
        vec![(cid(1), "old".to_string())]
    );

    // Writing a credential generates a new key; the old one stays unreadable.
    config
        .put_credential(cid(2), "new", &Secret::new("new-secret".into()))
        .await
        .unwrap();
    assert_eq!(raw_count(name, store::KEYS).await, 1);
    assert_eq!(
        config.resolve_credential(cid(2)).await.unwrap().expose(),
        "new-secret"
    );
    assert_eq!(
        config.resolve_credential(cid(1)).await,
        Err(CredentialFailure::Undecryptable)
    );
    // Entering it again repairs it.
    config
        .put_credential(cid(1), "old", &Secret::new("old-secret".into()))
        .await
        .unwrap();
    assert_eq!(
        config.resolve_credential(cid(1)).await.unwrap().expose(),
        "old-secret"
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_missing_credential_is_missing_not_unreadable() {
    let name = "lifeline-config-test-missing";
    let config = fresh(name).await;
    assert_eq!(
        config.resolve_credential(cid(1)).await,
        Err(CredentialFailure::Missing)
    );
    config
        .put_credential(cid(2), "other", &Secret::new("x".into()))
        .await
        .unwrap();
    assert_eq!(
        config.resolve_credential(cid(1)).await,
        Err(CredentialFailure::Missing)
    );
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_malformed_credential_record_is_unreadable_with_the_reason() {
    let name = "lifeline-config-test-malformed-credential";
    let config = fresh(name).await;
    config
        .put_credential(cid(1), "good", &Secret::new("good".into()))
        .await
        .unwrap();
    let good = raw_get(name, store::CREDENTIALS, &cid(1).to_string())
        .await
        .unwrap();
    let variant = |n: u128, edit: &dyn Fn(&JsValue)| {
        let copy: JsValue = Object::assign(&Object::new(), good.unchecked_ref()).into();
        set_field(&copy, "id", &cid(n).to_string().into());
        edit(&copy);
        copy
    };
    let records = [
        variant(10, &|r| {
            set_field(r, "iv", &Uint8Array::new_with_length(8).into())
        }),
        variant(11, &|r| set_field(r, "iv", &"not bytes".into())),
        variant(12, &|r| set_field(r, "ciphertext", &PLANTED.into())),
        variant(13, &|r| {
            set_field(r, "ciphertext", &ArrayBuffer::new(4).into())
        }),
        variant(14, &|r| set_field(r, "v", &7.into())),
        // The original record (its own id, so it still decrypts) with a
        // label that is too long.
        {
            let copy: JsValue = Object::assign(&Object::new(), good.unchecked_ref()).into();
            set_field(&copy, "label", &PLANTED.repeat(20).into());
            copy
        },
    ];
    raw_put(name, store::CREDENTIALS, &records).await;
    let expect = [
        (10, "iv is 8 bytes"),
        (11, "iv is not a Uint8Array"),
        (12, "ciphertext is not an ArrayBuffer"),
        (13, "ciphertext is 4 bytes"),
        (14, "newer Lifeline"),
    ];
    for (n, reason) in expect {
        let detail = malformed_reason(config.resolve_credential(cid(n)).await);
        assert!(detail.contains(reason), "{n}: {detail}");
        assert!(!detail.contains(PLANTED));
    }
    // A bad label does not stop the secret from resolving, but the label
    // itself is reported as damaged, without quoting it.
    assert_eq!(
        config.resolve_credential(cid(1)).await.unwrap().expose(),
        "good"
    );
    let error = config.credential_label(cid(1)).await.unwrap_err();
    assert!(matches!(error, ConfigError::Corrupt(_)));
    assert!(!error.to_string().contains(PLANTED));
    assert!(config
        .list_credentials()
        .await
        .unwrap()
        .contains(&(cid(1), "(unreadable label)".to_string())));
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn a_planted_secret_never_appears_in_any_error_text() {
    let name = "lifeline-config-test-no-leak";
    let config = fresh(name).await;
    let mut texts: Vec<String> = Vec::new();
    let mut record = |display: String, debug: String| {
        texts.push(display);
        texts.push(debug);
    };

    // Refused writes.
    let long_secret = Secret::new(PLANTED.repeat(1 + limits::MAX_SECRET_BYTES / PLANTED.len()));
    let e = config
        .put_credential(cid(1), "label", &long_secret)
        .await
        .unwrap_err();
    record(e.to_string(), format!("{e:?}"));
    let e = config
        .put_credential(cid(1), &PLANTED.repeat(10), &Secret::new(PLANTED.into()))
        .await
        .unwrap_err();
    record(e.to_string(), format!("{e:?}"));
    let mut profile = full_profile(1);
    profile.env.push(EnvVar {
        name: "TOKEN".into(),
        value: EnvValue::Literal(PLANTED.repeat(1000)),
    });
    let e = config.put_profile(&profile).await.unwrap_err();
    record(e.to_string(), format!("{e:?}"));

    // Failed resolutions: swapped, key gone, malformed.
    config
        .put_credential(cid(2), "a", &Secret::new(PLANTED.into()))
        .await
        .unwrap();
    config
        .put_credential(cid(3), "b", &Secret::new(format!("{PLANTED}-b")))
        .await
        .unwrap();
    let two = raw_get(name, store::CREDENTIALS, &cid(2).to_string())
        .await
        .unwrap();
    set_field(&two, "id", &cid(4).to_string().into());
    raw_put(name, store::CREDENTIALS, std::slice::from_ref(&two)).await;
    let f = config.resolve_credential(cid(4)).await.unwrap_err();
    record(format!("{f:?}"), format!("{f:?}"));
    set_field(&two, "id", &cid(5).to_string().into());
    set_field(&two, "iv", &Uint8Array::from(PLANTED.as_bytes()).into());
    raw_put(name, store::CREDENTIALS, &[two]).await;
    let f = config.resolve_credential(cid(5)).await.unwrap_err();
    record(format!("{f:?}"), format!("{f:?}"));
    raw_delete(name, store::KEYS, CREDENTIAL_KEY_NAME).await;
    let f = config.resolve_credential(cid(2)).await.unwrap_err();
    record(format!("{f:?}"), format!("{f:?}"));

    // A damaged profile record carrying it.
    let mut json: serde_json::Value = serde_json::to_value(full_profile(6)).unwrap();
    json["budget"] = serde_json::Value::String(PLANTED.into());
    raw_put(
        name,
        store::PROFILES,
        &[profile_record(&pid(6).to_string(), &json.to_string())],
    )
    .await;
    let lookup = config.lookup_profile(pid(6)).await;
    record(format!("{lookup:?}"), format!("{lookup:?}"));
    for listed in config.list_profiles().await.unwrap() {
        record(format!("{listed:?}"), format!("{listed:?}"));
    }

    // And the secret itself never prints.
    record(
        format!("{:?}", Secret::new(PLANTED.into())),
        format!("{:?}", config.resolve_credential(cid(3)).await),
    );

    assert!(texts.len() >= 16);
    for text in &texts {
        assert!(!text.contains(PLANTED), "leaked: {text}");
        assert!(!text.contains("sk-PLANTED"), "leaked: {text}");
    }
    finish(config, name).await;
}

// ---------------------------------------------------------------------------
// Limits

#[wasm_bindgen_test]
async fn labels_and_secrets_are_bounded_with_a_clear_error() {
    let name = "lifeline-config-test-limits";
    let config = fresh(name).await;
    let ok = Secret::new("s".into());
    config
        .put_credential(cid(1), &"L".repeat(limits::MAX_LABEL_BYTES), &ok)
        .await
        .unwrap();
    let e = config
        .put_credential(cid(2), &"L".repeat(limits::MAX_LABEL_BYTES + 1), &ok)
        .await
        .unwrap_err();
    assert_eq!(e, ConfigError::InvalidLabel { len: 201 });
    assert!(e.to_string().contains("1 to 200 bytes"), "{e}");
    assert_eq!(
        config.put_credential(cid(2), "  ", &ok).await,
        Err(ConfigError::InvalidLabel { len: 2 })
    );

    let largest = Secret::new("x".repeat(limits::MAX_SECRET_BYTES));
    config
        .put_credential(cid(3), "largest", &largest)
        .await
        .unwrap();
    assert_eq!(config.resolve_credential(cid(3)).await, Ok(largest));
    let e = config
        .put_credential(
            cid(4),
            "too large",
            &Secret::new("x".repeat(limits::MAX_SECRET_BYTES + 1)),
        )
        .await
        .unwrap_err();
    assert_eq!(e, ConfigError::InvalidSecret { len: 16385 });
    assert!(e.to_string().contains("16384 bytes"), "{e}");
    assert_eq!(
        config
            .put_credential(cid(4), "empty", &Secret::new(String::new()))
            .await,
        Err(ConfigError::InvalidSecret { len: 0 })
    );
    assert_eq!(raw_count(name, store::CREDENTIALS).await, 2);
    finish(config, name).await;
}

#[wasm_bindgen_test]
async fn at_most_256_profiles_and_256_credentials_are_kept() {
    let name = "lifeline-config-test-count-limits";
    let config = fresh(name).await;
    for n in 1..=limits::MAX_PROFILES as u128 {
        config
            .put_profile(&Profile::built_in(pid(n)))
            .await
            .unwrap();
    }
    let e = config
        .put_profile(&Profile::built_in(pid(1000)))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        ConfigError::TooMany {
            what: StoredKind::Profiles,
            max: 256
        }
    );
    assert!(e.to_string().contains("delete one"), "{e}");
    // Editing one that exists still works at the limit.
    let mut edit = Profile::built_in(pid(1));
    edit.revision = 2;
    config.put_profile(&edit).await.unwrap();
    assert_eq!(raw_count(name, store::PROFILES).await, 256);

    let secret = Secret::new("s".into());
    for n in 1..=limits::MAX_CREDENTIALS as u128 {
        config.put_credential(cid(n), "c", &secret).await.unwrap();
    }
    assert_eq!(
        config.put_credential(cid(1000), "c", &secret).await,
        Err(ConfigError::TooMany {
            what: StoredKind::Credentials,
            max: 256
        })
    );
    config
        .put_credential(cid(1), "replaced at the limit", &secret)
        .await
        .unwrap();
    assert_eq!(raw_count(name, store::CREDENTIALS).await, 256);
    assert_eq!(config.list_credentials().await.unwrap().len(), 256);
    finish(config, name).await;
}
