use super::*;
use lifeline_core::journal::ProviderFailureClass;
use lifeline_core::recovery::{Action, Dimension, Verdict};
use lifeline_core::{Outcome, ProviderRequestStatus, TurnStatus};

#[test]
fn every_key_has_a_text_in_every_locale() {
    assert!(Msg::ALL.len() > 100);
    for &msg in Msg::ALL {
        for locale in Locale::ALL {
            let text = t(locale, msg);
            assert!(!text.trim().is_empty(), "{msg:?} in {locale:?}");
        }
        // Parameters agree: a German text uses the same `{n}`s.
        let params = |l| {
            let text = t(l, msg);
            (0..10)
                .filter(|n| text.contains(&format!("{{{n}}}")))
                .collect::<Vec<_>>()
        };
        assert_eq!(params(Locale::En), params(Locale::De), "{msg:?}");
    }
}

#[test]
fn the_restart_notice_says_what_ran_on() {
    let en = |r, c| restart_summary(Locale::En, r, c);
    assert!(en(0, 0).ends_with("no commands were running."));
    assert!(en(1, 1).ends_with("the running command continued."));
    assert!(en(1, 0).contains("the running command did not continue"));
    assert!(en(3, 3).ends_with("all 3 running commands continued."));
    assert!(en(3, 1).contains("1 of 3 running commands continued"));
    assert!(restart_summary(Locale::De, 2, 2).contains("alle 2 laufenden Befehle"));
    for (r, c) in [(0, 0), (1, 1), (1, 0), (3, 3), (3, 1)] {
        assert!(!en(r, c).contains('{'), "{r} {c}");
    }
}

#[test]
fn english_accessible_names_are_the_design_contract() {
    // DESIGN.md, "Accessible names (the UI contract)", plus the names the
    // end-to-end tests use.
    let table = [
        (Msg::Sessions, "Sessions"),
        (Msg::NewSession, "New session"),
        (Msg::Transcript, "Transcript"),
        (Msg::JumpToLatest, "Jump to latest"),
        (Msg::CopyOutput, "Copy output"),
        (Msg::CopyReply, "Copy reply"),
        (Msg::CopyCode, "Copy code"),
        (Msg::ViewFullOutput, "View full output"),
        (Msg::DownloadOutput, "Download output"),
        (Msg::Message, "Message"),
        (Msg::Send, "Send"),
        (Msg::Stop, "Stop"),
        (Msg::CommandName, "Command: {0}"),
        (Msg::Recovery, "Recovery"),
        (Msg::Resume, "Resume"),
        (Msg::ContinueFromHistory, "Continue from history"),
        (Msg::StartFresh, "Start fresh"),
        (Msg::InspectWorkspace, "Inspect workspace"),
        (Msg::Archive, "Archive"),
        (Msg::Details, "Details"),
        (Msg::Conversation, "Conversation"),
        (Msg::Workspace, "Workspace"),
        (Msg::Credentials, "Credentials"),
        (Msg::Processes, "Processes"),
        (Msg::Attachments, "Attachments"),
        (Msg::Survived, "survived"),
        (Msg::Missing, "missing"),
        (Msg::Uncertain, "uncertain"),
        (Msg::Lost, "lost"),
        (Msg::NotApplicable, "not applicable"),
        (Msg::ReadOnlyStopped, "Read-only: the agent is stopped"),
        (Msg::Environment, "Environment"),
        (Msg::Language, "Language"),
        (Msg::ConfirmStartFresh, "Confirm start fresh"),
        (Msg::ConfirmArchive, "Confirm archive"),
        (Msg::ConfirmReissue, "Confirm re-issue"),
        (Msg::SessionDetails, "Session details"),
        (Msg::QueuedMessages, "Queued messages"),
        (Msg::Cancel, "Cancel"),
        (Msg::TechnicalDetails, "Technical details"),
        (Msg::Profiles, "Profiles"),
        (Msg::SavedProfiles, "Saved profiles"),
        (Msg::SaveProfile, "Save profile"),
        (Msg::UseForSession, "Use for this session"),
        (Msg::Name, "Name"),
        (Msg::Provider, "Provider"),
        (Msg::Model, "Model"),
        (Msg::BaseUrl, "Base URL"),
        (Msg::ApiKey, "API key"),
        (Msg::ApiKeySet, "API key set"),
        (Msg::SelectedMark, " (selected)"),
        (Msg::ImportedReadOnly, "Imported evidence (read-only)"),
    ];
    for (msg, english) in table {
        assert_eq!(t(Locale::En, msg), english, "{msg:?}");
    }
    assert_eq!(
        tf_in(Locale::En, Msg::CommandName, &["sleep 60"]),
        "Command: sleep 60"
    );
    // German names differ where the word does.
    assert_eq!(t(Locale::De, Msg::Send), "Senden");
    assert_eq!(t(Locale::De, Msg::Message), "Nachricht");
    assert_eq!(t(Locale::De, Msg::Resume), "Wiederaufnehmen");
}

#[test]
fn core_labels_map_to_keys_with_the_same_english() {
    for o in Outcome::ALL {
        assert_eq!(t(Locale::En, outcome(o)), o.label());
    }
    for a in Action::ALL {
        assert_eq!(t(Locale::En, action(a)), a.label());
        if a.confirms() {
            assert_eq!(
                t(Locale::En, confirm(a)),
                format!("Confirm {}", a.label().to_lowercase())
            );
        }
    }
    for d in Dimension::ALL {
        assert_eq!(t(Locale::En, dimension(d)), d.label());
    }
    for v in [
        Verdict::Survived,
        Verdict::Missing,
        Verdict::Uncertain,
        Verdict::Lost,
        Verdict::NotApplicable,
    ] {
        assert_eq!(t(Locale::En, verdict(v)), v.label());
    }
    for s in [
        TurnStatus::Completed,
        TurnStatus::Failed,
        TurnStatus::Interrupted,
        TurnStatus::Cancelled,
    ] {
        assert_eq!(t(Locale::En, turn_status(s)), s.as_str());
    }
    for s in [
        ProviderRequestStatus::Waiting,
        ProviderRequestStatus::Replied,
        ProviderRequestStatus::Failed,
        ProviderRequestStatus::Uncertain,
    ] {
        assert_eq!(t(Locale::En, request_status(s)), s.as_str());
    }
}

#[test]
fn the_browser_languages_choose_the_locale() {
    assert_eq!(Locale::detect(["de-DE", "en-US"]), Locale::De);
    assert_eq!(Locale::detect(["de"]), Locale::De);
    assert_eq!(Locale::detect(["DE-at"]), Locale::De);
    assert_eq!(Locale::detect(["de_CH"]), Locale::De);
    assert_eq!(Locale::detect(["en-US", "de-DE"]), Locale::En);
    assert_eq!(Locale::detect(["en-US"]), Locale::En);
    // The first language this page speaks wins.
    assert_eq!(Locale::detect(["fr-FR", "de-DE"]), Locale::De);
    assert_eq!(Locale::detect(["fr-FR", "ja"]), Locale::En);
    assert_eq!(Locale::detect(["dem", "des-x"]), Locale::En);
    assert_eq!(Locale::detect([]), Locale::En);
    assert_eq!(Locale::from_tag("de"), Some(Locale::De));
    assert_eq!(Locale::from_tag("en"), Some(Locale::En));
    assert_eq!(Locale::from_tag(""), None);
    for l in Locale::ALL {
        assert_eq!(Locale::from_tag(l.tag()), Some(l));
    }
}

#[test]
fn parameters_are_filled_in_place() {
    assert_eq!(
        fill("{0} of {1} used, {2}", &["1", "2", "x"]),
        "1 of 2 used, x"
    );
    assert_eq!(fill("{1} then {0}", &["a", "b"]), "b then a");
    assert_eq!(fill("{0} and {0}", &["a"]), "a and a");
    assert_eq!(fill("a {x} {", &[]), "a {x} {");
    assert_eq!(fill("missing {3}", &["a"]), "missing ");
    assert_eq!(
        tf_in(Locale::De, Msg::ManyWaiting, &["3"]),
        "3 Nachrichten warten"
    );
    assert_eq!(
        tf_in(
            Locale::En,
            Msg::NotPossibleNow,
            &["Resume", "the runtime is gone"]
        ),
        "Resume is not possible now: the runtime is gone"
    );
    assert_eq!(
        tf_in(Locale::De, Msg::DeleteQuestion, &["Lokal"]),
        "„Lokal“ löschen?"
    );
}

#[test]
fn provider_failures_read_as_the_core_says_them_in_english_and_differ_in_german() {
    for class in ProviderFailureClass::ALL {
        let (label, advice) = provider_failure(class);
        assert_eq!(t(Locale::En, label), class.label());
        assert_eq!(t(Locale::En, advice), class.advice());
        assert_ne!(t(Locale::De, advice), class.advice(), "{class:?}");
    }
}

#[test]
fn numbers_are_grouped_per_locale() {
    assert_eq!(num(Locale::En, 0), "0");
    assert_eq!(num(Locale::En, 999), "999");
    assert_eq!(num(Locale::En, 1000), "1,000");
    assert_eq!(num(Locale::De, 1_234_567), "1.234.567");
}

#[test]
fn sizes_read_like_the_brief() {
    assert_eq!(bytes(Locale::En, 999), "999 B");
    assert_eq!(bytes(Locale::En, 1_200_000), "1.2 MB");
    assert_eq!(bytes(Locale::En, 10_000_000_000), "10.0 GB");
    assert_eq!(bytes(Locale::De, 1_200_000), "1,2 MB");
    assert_eq!(bytes(Locale::En, 1_000), "1.0 kB");
    assert_eq!(bytes(Locale::En, 999_999), "1000.0 kB");
    assert_eq!(bytes(Locale::En, 1_290_000), "1.3 MB");
}

#[test]
fn token_counts_read_per_locale_and_none_is_left_out() {
    assert_eq!(
        tokens(Locale::En, Msg::TurnTokens, (1234, 56)).as_deref(),
        Some("Tokens: 1,234 in · 56 out")
    );
    assert_eq!(
        tokens(Locale::De, Msg::TokensInOut, (1234, 0)).as_deref(),
        Some("1.234 ein · 0 aus")
    );
    assert_eq!(tokens(Locale::En, Msg::TurnTokens, (0, 0)), None);
}

#[test]
fn the_session_list_states_the_limit_the_engine_keeps() {
    let limit = lifeline_core::session::MAX_RUNNING_SESSIONS.to_string();
    for locale in Locale::ALL {
        assert!(
            t(locale, Msg::BackgroundNote).contains(&limit),
            "{locale:?}"
        );
    }
}
