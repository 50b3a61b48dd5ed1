//! Provider faults in the durable schema: what retries and timeouts added
//! is additive, so journals and profiles written before them still load.

use lifeline_core::journal::JournalRecord;
use lifeline_core::profile::AgentBudget;
use lifeline_core::{ProviderFailureClass, ProviderRequestId};

#[test]
fn a_budget_stored_before_retries_loads_with_the_default_policy() {
    let old = r#"{"max_steps":3,"max_commands":4,"max_tokens":500,"max_wall_ms":9000}"#;
    let budget: AgentBudget = serde_json::from_str(old).expect("an old budget loads");
    assert_eq!(budget.max_steps, 3);
    assert_eq!(budget.max_wall_ms, 9000);
    let d = AgentBudget::default();
    assert_eq!(
        (
            budget.max_attempts,
            budget.max_retry_ms,
            budget.connect_timeout_ms,
            budget.idle_timeout_ms
        ),
        (
            d.max_attempts,
            d.max_retry_ms,
            d.connect_timeout_ms,
            d.idle_timeout_ms
        )
    );
    assert_eq!(d.max_attempts, 4);
    assert_eq!(d.max_retry_ms, 120_000);
    assert_eq!(d.idle_timeout_ms, 60_000);
    // And a new one round-trips.
    let again: AgentBudget =
        serde_json::from_str(&serde_json::to_string(&d).unwrap()).expect("round trip");
    assert_eq!(again, d);
}

#[test]
fn old_provider_records_still_decode_and_new_ones_round_trip() {
    let request = ProviderRequestId::from_u128(0x51).expect("a valid id");
    // A failure record as journals before retries wrote it.
    let old = format!(
        r#"{{"type":"provider_failed","request":"{request}","class":"cut","message":"m","partial_text":"p","stamp":"{}"}}"#,
        lifeline_core::ErrorStamp::from_u128(0x52).expect("a valid stamp")
    );
    let record: JournalRecord = serde_json::from_str(&old).expect("an old record decodes");
    assert!(matches!(
        record,
        JournalRecord::ProviderFailed {
            class: ProviderFailureClass::Cut,
            ..
        }
    ));
    let retried = JournalRecord::ProviderRetried {
        request,
        attempt: 2,
        class: ProviderFailureClass::RateLimit,
        message: "HTTP 429: slow down".into(),
        wait_ms: 3_000,
    };
    let json = serde_json::to_string(&retried).unwrap();
    assert!(json.contains(r#""type":"provider_retried""#), "{json}");
    assert_eq!(
        serde_json::from_str::<JournalRecord>(&json).unwrap(),
        retried
    );
    assert!(retried.validate().is_ok());
    for class in [
        ProviderFailureClass::Overloaded,
        ProviderFailureClass::ConnectTimeout,
        ProviderFailureClass::IdleTimeout,
        ProviderFailureClass::NoFinish,
    ] {
        let json = serde_json::to_string(&class).unwrap();
        assert_eq!(json, format!("\"{}\"", class.as_str()));
        assert_eq!(
            serde_json::from_str::<ProviderFailureClass>(&json).unwrap(),
            class
        );
        assert_ne!(class.advice(), ProviderFailureClass::Cut.advice());
    }
}

#[test]
fn a_connection_that_failed_is_worded_as_down_or_cors_and_a_drop_as_a_drop() {
    let transport = ProviderFailureClass::Transport.advice();
    assert!(
        transport.contains("CORS") && transport.contains("down"),
        "{transport}"
    );
    let cut = ProviderFailureClass::Cut.advice();
    assert!(!cut.contains("CORS") && cut.contains("mid-reply"), "{cut}");
}
