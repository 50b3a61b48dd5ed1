use super::*;

fn tiny() -> LocalModel {
    LocalModel {
        file: LocalFile {
            name: "tiny.gguf".into(),
            size: 270_000,
            stored_as: "3f2a-tiny.gguf".into(),
            architecture: "llama".into(),
            parameters: 120_000,
            context_length: 1024,
            model_name: Some("Tiny test model".into()),
        },
        sampling: Sampling {
            context_tokens: 1024,
            ..Sampling::default()
        },
    }
}

fn local() -> Profile {
    let mut p = Profile::built_in(ProfileId::from_u128(7).unwrap());
    p.name = "Tiny".into();
    p.provider = tiny().provider();
    p
}

#[test]
fn a_local_profile_round_trips_and_validates() {
    let p = local();
    p.validate().unwrap();
    let text = serde_json::to_string(&p).unwrap();
    assert!(
        text.contains(r#""provider":{"kind":"local","name":"Tiny test model","spec":"{\"file\":{\"name\":\"tiny.gguf\""#),
        "{text}"
    );
    let back: Profile = serde_json::from_str(&text).unwrap();
    assert_eq!(back, p);
    assert_eq!(back.provider.local_model(), Some(Ok(tiny())));
    assert_eq!(p.provider.model(), Some("Tiny test model"));
    assert_eq!(p.provider.label(), "local model (GGUF)");
}

#[test]
fn a_local_profile_without_sampling_loads_with_the_defaults() {
    let text = r#"{"kind":"local","name":"m.gguf","spec":"{\"file\":{\"name\":\"m.gguf\",\"size\":5,\"stored_as\":\"m.gguf\",\"architecture\":\"qwen2\",\"parameters\":9,\"context_length\":32768}}"}"#;
    let provider: Provider = serde_json::from_str(text).unwrap();
    let LocalModel { file, sampling } = provider.local_model().unwrap().unwrap();
    assert_eq!(sampling, Sampling::default());
    assert_eq!(file.model_name, None);
    assert_eq!(provider.model(), Some("m.gguf"));
}

#[test]
fn profiles_stored_before_local_models_still_load() {
    let old = r#"{"kind":"open_ai_compatible","base_url":"http://localhost:11434/v1","model":"q"}"#;
    let provider: Provider = serde_json::from_str(old).unwrap();
    assert_eq!(
        provider,
        Provider::OpenAiCompatible {
            base_url: "http://localhost:11434/v1".into(),
            model: "q".into()
        }
    );
    let built_in: Provider = serde_json::from_str(r#"{"kind":"built_in"}"#).unwrap();
    assert_eq!(built_in, Provider::BuiltIn);
}

fn with(edit: impl FnOnce(&mut LocalFile, &mut Sampling)) -> Result<(), InvalidProfile> {
    let mut m = tiny();
    edit(&mut m.file, &mut m.sampling);
    let mut p = local();
    p.provider = m.provider();
    p.validate()
}

#[test]
fn a_local_spec_that_does_not_decode_is_refused() {
    for spec in ["", "{", r#"{"file":{}}"#, &"x".repeat(3000)] {
        let mut p = local();
        p.provider = Provider::Local {
            name: "Tiny".into(),
            spec: spec.into(),
        };
        assert!(p.validate().is_err(), "{spec:?}");
        assert!(matches!(p.provider.local_model(), Some(Err(_))));
    }
    let mut p = local();
    p.provider = Provider::Local {
        name: " ".into(),
        spec: serde_json::to_string(&tiny()).unwrap(),
    };
    assert!(p.validate().is_err());
}

#[test]
fn a_stored_name_cannot_leave_the_model_folder() {
    for bad in ["../journal", "a/b", ".hidden", "", "x\\y", "a b"] {
        assert!(with(|f, _| f.stored_as = bad.into()).is_err(), "{bad:?}");
    }
    with(|f, _| f.stored_as = "model-1_q4.gguf".into()).unwrap();
}

#[test]
fn sampling_is_bounded() {
    assert!(with(|_, s| s.temperature_percent = 201).is_err());
    with(|_, s| s.temperature_percent = 0).unwrap();
    assert!(with(|_, s| s.top_p_percent = 0).is_err());
    assert!(with(|_, s| s.top_p_percent = 101).is_err());
    // Beyond what the model was trained for.
    assert!(with(|_, s| s.context_tokens = 2048).is_err());
    assert!(with(|_, s| s.context_tokens = 64).is_err());
    assert!(with(|_, s| s.max_tokens = 0).is_err());
    assert!(with(|_, s| s.max_tokens = 1024).is_err());
    with(|_, s| s.max_tokens = 1023).unwrap();
    // A header that claims an absurd context is held to the ceiling.
    assert!(with(|f, s| {
        f.context_length = u64::MAX;
        s.context_tokens = u32::MAX;
    })
    .is_err());
}

#[test]
fn header_facts_are_bounded() {
    assert!(with(|f, _| f.architecture = "a".repeat(201)).is_err());
    assert!(with(|f, _| f.model_name = Some("n".repeat(201))).is_err());
    assert!(with(|f, _| f.name = " ".into()).is_err());
    assert!(with(|f, _| f.size = 0).is_err());
}

#[test]
fn a_picked_model_starts_with_defaults_it_can_hold() {
    // Within the trained context, half of it at most for the reply, and
    // always a profile that passes its own check.
    for (context, expect) in [
        (1024, (1024, 512)),
        (32_768, (4096, 512)),
        (300, (300, 150)),
    ] {
        let sampling = Sampling::for_model(context);
        assert_eq!((sampling.context_tokens, sampling.max_tokens), expect);
        assert_eq!(sampling.check(context), Ok(()));
    }
    // A header without a usable context: the defaults, which check()
    // bounds by the smallest context it accepts.
    let sampling = Sampling::for_model(0);
    assert_eq!(sampling, Sampling::default());
    assert!(sampling.check(0).is_err());
}

#[test]
fn sampling_reads_and_writes_the_form_s_texts() {
    let s = Sampling::default();
    assert_eq!(s.texts(), ["0.7", "0.9", "512", "4096"]);
    assert_eq!(Sampling::parse(&s.texts()), Ok(s));
    let texts = |t: [&str; 4]| t.map(String::from).to_vec();
    assert_eq!(
        Sampling::parse(&texts([" 0 ", "1", "64", "1024"])),
        Ok(Sampling {
            temperature_percent: 0,
            top_p_percent: 100,
            max_tokens: 64,
            context_tokens: 1024,
        })
    );
    let odd = Sampling::parse(&texts([".05", "0.95", "1", "128"])).unwrap();
    assert_eq!((odd.temperature_percent, odd.top_p_percent), (5, 95));
    assert_eq!(odd.texts()[..2], ["0.05", "0.95"]);
    for bad in [
        ["", "0.9", "1", "128"],
        ["-1", "0.9", "1", "128"],
        ["0.755", "0.9", "1", "128"],
        ["1e2", "0.9", "1", "128"],
        ["0.7", "x", "1", "128"],
        ["0.7", "0.9", "1.5", "128"],
        ["0.7", "0.9", "1", "-128"],
        ["0.7", "0.9", "1", "99999999999"],
    ] {
        assert!(Sampling::parse(&texts(bad)).is_err(), "{bad:?}");
    }
    // In range is the check's business: 3 parses, and is refused there.
    let hot = Sampling::parse(&texts(["3", "0.9", "64", "1024"])).unwrap();
    assert_eq!(
        hot.check(1024).unwrap_err().to_string(),
        "the temperature must be 0 to 2"
    );
    assert!(
        Sampling::parse(&["0.7".to_string()]).is_err(),
        "too few texts"
    );
}

#[test]
fn the_form_s_sampling_replaces_a_local_model_s_and_nothing_else() {
    let texts = ["0", "1", "100", "512"].map(String::from).to_vec();
    let edited = tiny().provider().with_sampling(&texts).unwrap();
    let model = edited.local_model().unwrap().unwrap();
    assert_eq!(model.file, tiny().file);
    assert_eq!(model.sampling.texts(), texts);
    assert_eq!(tiny().provider().with_sampling(&[]), Ok(tiny().provider()));
    assert_eq!(
        Provider::BuiltIn.with_sampling(&texts),
        Ok(Provider::BuiltIn)
    );
    let bad = ["hot", "1", "100", "512"].map(String::from).to_vec();
    assert!(tiny().provider().with_sampling(&bad).is_err());
}

#[test]
fn a_refusal_names_the_setting_and_its_bound_not_english() {
    // The context's bound depends on the model, so it travels with the
    // refusal; the other bounds are the limits the words read.
    assert_eq!(
        with(|_, s| s.context_tokens = 64),
        Err(InvalidProfile::Context { most: 1024 })
    );
    assert_eq!(
        with(|_, s| s.temperature_percent = 201),
        Err(InvalidProfile::Temperature)
    );
    assert_eq!(with(|f, _| f.size = 0), Err(InvalidProfile::LocalFileEmpty));
    assert_eq!(
        Sampling::parse(&["x".into(), "0.9".into(), "1".into(), "128".into()]),
        Err(InvalidProfile::TemperatureText)
    );
    let mut p = local();
    p.env = vec![
        EnvVar {
            name: "A".into(),
            value: EnvValue::Literal("1".into()),
        };
        2
    ];
    assert_eq!(
        p.validate(),
        Err(InvalidProfile::EnvTwice { name: "A".into() })
    );
    p.env.truncate(1);
    p.env[0].name = "PWD".into();
    assert_eq!(
        p.validate(),
        Err(InvalidProfile::EnvReserved { name: "PWD".into() })
    );
    p.env.clear();
    p.owner = "elsewhere".into();
    let refused = p.validate().unwrap_err();
    // Its `Display` is the English of logs and the store's errors.
    assert_eq!(
        refused.to_string(),
        "the profile belongs to \"elsewhere\", not this browser"
    );
}

/// A profile or credential failure is recorded as the session's failure
/// cause. Those recorded before the reasons were typed (the store's
/// English) read as they were; the typed ones are stored compactly and
/// read back whole, and an unknown reason is an error, not a panic.
#[test]
fn blocked_profiles_and_unreadable_credentials_are_recorded_by_reason() {
    use crate::session_record::FailureCause;
    use crate::store_fault::StoreFault;
    let old = ProfileBlock::Unreadable {
        detail: "the profile store connection was closed by this tab".into(),
    };
    assert_eq!(
        serde_json::to_string(&old).unwrap(),
        r#"{"Unreadable":{"detail":"the profile store connection was closed by this tab"}}"#,
        "the form earlier builds wrote"
    );
    let credential = CredentialId::from_u128(7).unwrap();
    let causes = [
        FailureCause::ProfileBlocked { block: old },
        FailureCause::ProfileBlocked {
            block: ProfileBlock::Store {
                fault: StoreFault::TooMany {
                    what: crate::store_fault::StoredKind::Profiles,
                    max: 256,
                },
            },
        },
        FailureCause::ProfileBlocked {
            block: ProfileBlock::Invalid {
                invalid: InvalidProfile::OtherOwner {
                    owner: "elsewhere".into(),
                },
            },
        },
        FailureCause::Credential {
            credential,
            failure: CredentialFailure::Unreadable { detail: "x".into() },
        },
        FailureCause::Credential {
            credential,
            failure: CredentialFailure::Store {
                fault: StoreFault::Corrupt {
                    detail: "not an object".into(),
                },
            },
        },
        FailureCause::Credential {
            credential,
            failure: CredentialFailure::Undecryptable,
        },
    ];
    for cause in causes {
        let text = serde_json::to_string(&cause).unwrap();
        let back: FailureCause = serde_json::from_str(&text).unwrap();
        assert_eq!(back, cause, "{text}");
    }
    let typed = serde_json::to_string(&ProfileBlock::Store {
        fault: StoreFault::Blocked,
    })
    .unwrap();
    assert_eq!(typed, r#"{"Store":{"fault":[0,[],[2],[]]}}"#);
    assert!(serde_json::from_str::<ProfileBlock>(r#"{"Store":{"fault":[0,[],[99],[]]}}"#).is_err());
}
