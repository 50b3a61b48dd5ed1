use super::*;
use lifeline_provider::Reply;

#[test]
fn a_local_failure_before_the_load_generated_nothing_and_after_it_is_in_the_reply() {
    let before = local_failed("Error", "failed to load model: invalid magic", "", false);
    assert_eq!(before.class, C::InvalidRequest);
    assert_eq!(before.at, FailedAt::NoResponse);
    assert!(before
        .message
        .starts_with("the model file is not a GGUF model: "));
    assert!(
        before.message.ends_with("invalid magic"),
        "{}",
        before.message
    );
    let after = local_failed("RuntimeError", "Invalid typed array length: 7", "Hel", true);
    assert_eq!(after.class, C::Malformed);
    assert_eq!(after.at, FailedAt::Reply);
    assert_eq!(after.partial_text, "Hel");
    // A local request is never retried, whatever happened before its load.
    assert!(!crate::retry::refused_before_work(&before));
    assert!(!crate::retry::refused_before_work(&after));
}

#[test]
fn every_local_failure_has_its_class() {
    for (name, message, class) in [
        ("AbortError", "aborted", C::Cancelled),
        (
            "Error",
            "unknown model architecture: 'x'",
            C::InvalidRequest,
        ),
        (
            "Error",
            "the prompt is too long for the context",
            C::ContextLength,
        ),
        ("RangeError", "Out of memory", C::Server),
        ("TypeError", "something else", C::Server),
    ] {
        let f = local_failed(name, message, "", true);
        assert_eq!(f.class, class, "{name}: {message} → {}", f.message);
    }
    // A failure without words still says what failed.
    let silent = local_failed("Error", "", "", false);
    assert_eq!(silent.message, "Error: the local model failed");
    assert_eq!(
        silent.reason,
        Some(R::LocalFailed {
            name: "Error".into()
        })
    );
}

#[test]
fn a_fetch_that_never_answered_may_be_retried_but_a_stop_is_not() {
    let cut = fetch_failed("TypeError", "Failed to fetch", None);
    assert_eq!((cut.class, cut.at), (C::Transport, FailedAt::NoResponse));
    assert!(crate::retry::refused_before_work(&cut));
    let stopped = fetch_failed("AbortError", "The user aborted a request.", None);
    assert_eq!(stopped.class, C::Cancelled);
    assert!(!crate::retry::refused_before_work(&stopped));
}

#[test]
fn a_reply_that_broke_off_is_cut_never_a_transport_failure() {
    let f = read_failed("TypeError", "network error", None, "par");
    assert_eq!((f.class, f.at), (C::Cut, FailedAt::Reply));
    assert_eq!(f.partial_text, "par");
    assert!(!crate::retry::refused_before_work(&f));
    let stopped = read_failed("AbortError", "", None, "par");
    assert_eq!((stopped.class, stopped.at), (C::Cancelled, FailedAt::Reply));
}

#[test]
fn a_refusal_keeps_its_status_and_wait_and_never_the_key() {
    let waits = WaitHeaders {
        retry_after: Some("7"),
        ..WaitHeaders::default()
    };
    let f = refused(429, "slow down, sk-secret", waits, Some("sk-secret"));
    assert_eq!((f.class, f.at), (C::RateLimit, FailedAt::Status(429)));
    assert_eq!(f.retry_after_ms, Some(7000));
    assert!(f.message.starts_with("HTTP 429: "), "{}", f.message);
    assert!(!f.message.contains("sk-secret"), "{}", f.message);
    assert!(crate::retry::refused_before_work(&f));
    let auth = refused(401, "", WaitHeaders::default(), None);
    assert_eq!(auth.class, C::Auth);
    assert!(!crate::retry::refused_before_work(&auth));
}

#[test]
fn a_stream_the_decoder_refused_is_in_the_reply_with_its_text() {
    let partial = Reply {
        text: "so far".into(),
        ..Reply::default()
    };
    for (kind, class) in [
        (StreamErrorKind::Unfinished, C::NoFinish),
        (
            StreamErrorKind::Malformed {
                detail: "bad json".into(),
            },
            C::Malformed,
        ),
        (StreamErrorKind::TooLarge { what: "text" }, C::Malformed),
    ] {
        let f = stream_failed(StreamError {
            kind,
            partial: partial.clone(),
        });
        assert_eq!((f.class, f.at), (class, FailedAt::Reply));
        assert_eq!(f.partial_text, "so far");
    }
    assert_eq!(no_body().at, FailedAt::Reply);
}

#[test]
fn a_request_never_sent_failed_before_any_response() {
    for u in [
        Unsent::BuiltIn,
        Unsent::LocalSettingsUnreadable,
        Unsent::NoAbortController,
        Unsent::NoHeaders,
        Unsent::HeaderRefused {
            name: "x-api-key".into(),
        },
        Unsent::NotBuilt(BuildError::EmptyModel),
    ] {
        let f = unsent(u.clone());
        assert_eq!(f.at, FailedAt::NoResponse, "{u:?}");
        assert!(!f.message.is_empty());
    }
    // A profile the request cannot be built from is worded by the page,
    // with the key never echoed.
    let f = unsent(Unsent::NotBuilt(BuildError::InvalidApiKey));
    assert_eq!(
        f.reason,
        Some(lifeline_core::journal::FailureReason::KeyUnsendable)
    );
    assert_eq!(f.class, C::InvalidRequest);
    // Only a missing abort controller is a transport failure (retried).
    assert_eq!(unsent(Unsent::NoAbortController).class, C::Transport);
    // A header's value is never echoed, only its name.
    assert!(unsent(Unsent::HeaderRefused {
        name: "authorization".into()
    })
    .message
    .contains("authorization"));
}

#[test]
fn what_the_app_knows_is_a_reason_and_outside_words_stay_as_said() {
    // The app's own knowledge: a reason the page words, its English
    // recorded as the message.
    let f = local_failed("Error", "invalid magic", "", false);
    assert_eq!(
        f.reason,
        Some(R::NotGguf {
            detail: "invalid magic".into()
        })
    );
    assert_eq!(f.message, f.reason.as_ref().unwrap().to_string());
    let stopped = fetch_failed("AbortError", "", None);
    assert_eq!(stopped.reason, Some(R::Stopped));
    assert_eq!(stopped.message, "stopped by the user");
    // The browser said nothing: where it stopped is the app's to say.
    assert_eq!(
        fetch_failed("TypeError", "", None).reason,
        Some(R::RequestFailed)
    );
    assert_eq!(
        read_failed("TypeError", " ", None, "").reason,
        Some(R::ReplyStopped)
    );
    // A provider's or a browser's own words have no reason: shown as said.
    assert_eq!(
        fetch_failed("TypeError", "Failed to fetch", None).reason,
        None
    );
    assert_eq!(
        refused(500, "upstream", WaitHeaders::default(), None).reason,
        None
    );
    let other = local_failed("TypeError", "x is undefined", "", true);
    assert_eq!(
        (other.reason, other.message.as_str()),
        (None, "TypeError: x is undefined")
    );
}

/// A provider worker that ended: what it had been handed is uncertain and
/// never resent; what never reached it was never sent and may be retried.
#[test]
fn a_provider_worker_that_ended_leaves_what_it_had_uncertain_and_the_rest_unsent() {
    let handed = worker_ended(true);
    assert_eq!((handed.class, handed.at), (C::Cut, FailedAt::Reply));
    assert!(!crate::retry::refused_before_work(&handed));
    let waiting = worker_ended(false);
    assert_eq!(
        (waiting.class, waiting.at),
        (C::Transport, FailedAt::NoResponse)
    );
    assert!(crate::retry::refused_before_work(&waiting));
    for f in [handed, waiting] {
        assert_eq!(f.reason, Some(R::WorkerEnded));
        assert_eq!(f.message, "the worker calling the model stopped");
    }
}

/// A conversation too large to hand to the provider worker is not sent,
/// and not sent again: no retry can make it smaller.
#[test]
fn a_conversation_too_large_to_send_is_refused_for_good() {
    let f = too_large_to_send(5 << 20);
    assert_eq!((f.class, f.at), (C::ContextLength, FailedAt::NoResponse));
    assert!(!crate::retry::refused_before_work(&f));
    assert_eq!(
        f.message,
        "the conversation does not fit the model's context: 5242880 bytes of conversation"
    );
}
