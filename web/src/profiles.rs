//! The Profiles dialog: list, select, delete, create and edit environment
//! profiles. Thin components over [`Ui`] signals; the controller stores and
//! validates profiles, this only checks input early so errors show next to
//! their field.
//!
//! The API key is a secret: it lives in one signal while typed, crosses to
//! the controller once inside `SaveProfile`, and the signal is emptied right
//! after. It never goes into a URL, storage, the console or a notice; the
//! list only ever knows whether a key is set.

use crate::i18n::{self, t, text, tf, tf_in, tr, Locale, Msg};
use crate::io;
use crate::ui::{handler, set_if_changed, NoticeItem, Ui};
use crate::worded::ProfileSummary;
use leptos::html;
use leptos::prelude::*;
use lifeline_core::profile::{limits, AgentBudget, Capabilities, Provider, Tool, RESERVED_ENV};
use lifeline_core::ProfileId;
use lifeline_protocol::{KeyInput, Level, ProfileInput, SecretText};

pub const OPENAI_DEFAULT_URL: &str = "http://localhost:11434/v1";
pub const ANTHROPIC_DEFAULT_URL: &str = "https://api.anthropic.com";

/// The provider choice in the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    BuiltIn,
    OpenAi,
    Anthropic,
    Local,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::BuiltIn, Kind::OpenAi, Kind::Anthropic, Kind::Local];

    fn value(self) -> &'static str {
        match self {
            Kind::BuiltIn => "built_in",
            Kind::OpenAi => "openai_compatible",
            Kind::Anthropic => "anthropic",
            Kind::Local => "local",
        }
    }

    fn from_value(value: &str) -> Kind {
        Kind::ALL
            .into_iter()
            .find(|k| k.value() == value)
            .unwrap_or(Kind::BuiltIn)
    }

    pub fn label(self) -> Msg {
        match self {
            Kind::BuiltIn => Msg::BuiltInAgent,
            Kind::OpenAi => Msg::OpenAiCompatible,
            Kind::Anthropic => Msg::Anthropic,
            Kind::Local => Msg::LocalModel,
        }
    }

    fn default_url(self) -> &'static str {
        match self {
            Kind::BuiltIn | Kind::Local => "",
            Kind::OpenAi => OPENAI_DEFAULT_URL,
            Kind::Anthropic => ANTHROPIC_DEFAULT_URL,
        }
    }

    fn of(provider: &Provider) -> Kind {
        match provider {
            Provider::BuiltIn => Kind::BuiltIn,
            Provider::Local { .. } => Kind::Local,
            Provider::OpenAiCompatible { .. } => Kind::OpenAi,
            Provider::Anthropic { .. } => Kind::Anthropic,
        }
    }
}

/// A known server: choosing it fills the form's wire format and base URL,
/// and its line on allowing this page's origin (CORS) shows under the
/// choice. The user can still edit every field.
///
/// Headers are not in the table: the wire format sends what a server needs
/// (Anthropic's `anthropic-version` and
/// `anthropic-dangerous-direct-browser-access`), and a profile has no field
/// for optional ones (OpenRouter's `HTTP-Referer` and `X-Title`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// The product's own name, the same in every locale.
    pub name: &'static str,
    pub kind: Kind,
    pub base_url: &'static str,
    /// How to let this page's origin through, where the server does not by
    /// default; `{0}` is the origin.
    pub cors: Option<Msg>,
}

pub const PRESETS: [Preset; 8] = [
    Preset {
        name: "Ollama",
        kind: Kind::OpenAi,
        base_url: OPENAI_DEFAULT_URL,
        cors: Some(Msg::CorsOllama),
    },
    Preset {
        name: "LM Studio",
        kind: Kind::OpenAi,
        base_url: "http://localhost:1234/v1",
        cors: Some(Msg::CorsLmStudio),
    },
    Preset {
        name: "llama.cpp server",
        kind: Kind::OpenAi,
        base_url: "http://localhost:8080/v1",
        cors: Some(Msg::CorsLlamaCpp),
    },
    Preset {
        name: "OpenAI",
        kind: Kind::OpenAi,
        base_url: "https://api.openai.com/v1",
        cors: None,
    },
    Preset {
        name: "OpenRouter",
        kind: Kind::OpenAi,
        base_url: "https://openrouter.ai/api/v1",
        cors: None,
    },
    Preset {
        name: "Groq",
        kind: Kind::OpenAi,
        base_url: "https://api.groq.com/openai/v1",
        cors: None,
    },
    Preset {
        name: "Mistral",
        kind: Kind::OpenAi,
        base_url: "https://api.mistral.ai/v1",
        cors: None,
    },
    Preset {
        name: "Anthropic",
        kind: Kind::Anthropic,
        base_url: ANTHROPIC_DEFAULT_URL,
        cors: None,
    },
];

impl Preset {
    /// The preset the form's wire format and base URL match, if any: an
    /// edited URL makes the choice read as custom again.
    pub fn matching(kind: Kind, base_url: &str) -> Option<usize> {
        let url = base_url.trim().trim_end_matches('/');
        PRESETS
            .iter()
            .position(|p| p.kind == kind && p.base_url == url)
    }
}

/// A form field that can carry a validation error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Name,
    BaseUrl,
    Model,
    ModelFile,
    ApiKey,
    Env,
    KeyEnv,
    MaxSteps,
    MaxCommands,
    MaxTokens,
    MaxMinutes,
    MaxAttempts,
    RetrySeconds,
    ConnectSeconds,
    IdleSeconds,
    Temperature,
    TopP,
    ReplyTokens,
    ContextSize,
}

impl Field {
    fn id(self) -> &'static str {
        match self {
            Field::Name => "profile-name",
            Field::BaseUrl => "profile-base-url",
            Field::Model => "profile-model",
            Field::ModelFile => "profile-model-file",
            Field::ApiKey => "profile-api-key",
            Field::Env => "profile-env",
            Field::KeyEnv => "profile-key-env",
            Field::MaxSteps => "profile-max-steps",
            Field::MaxCommands => "profile-max-commands",
            Field::MaxTokens => "profile-max-tokens",
            Field::MaxMinutes => "profile-max-minutes",
            Field::MaxAttempts => "profile-max-attempts",
            Field::RetrySeconds => "profile-retry-seconds",
            Field::ConnectSeconds => "profile-connect-seconds",
            Field::IdleSeconds => "profile-idle-seconds",
            Field::Temperature => "profile-temperature",
            Field::TopP => "profile-top-p",
            Field::ReplyTokens => "profile-reply-tokens",
            Field::ContextSize => "profile-context-size",
        }
    }

    fn error_id(self) -> String {
        format!("{}-error", self.id())
    }
}

/// The form as typed, without the API key (which stays in its own signal so
/// no `Debug` or clone of this can carry it).
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    pub id: Option<ProfileId>,
    pub name: String,
    pub kind: Kind,
    pub base_url: String,
    pub model: String,
    /// The local model (`Provider::Local`) as the controller built it from
    /// a picked file, or the edited profile's: kept whole, never taken apart.
    pub local: Option<Provider>,
    /// What the form says about `local` when a profile is edited (the
    /// controller words it: the page never decodes the model's spec).
    pub local_facts: Option<String>,
    /// Its sampling settings as text (the controller reads them).
    pub sampling: Vec<String>,
    pub env: String,
    pub key_env: String,
    /// In the order of [`Tool::ALL`].
    pub tools: [bool; 4],
    pub js: bool,
    pub max_steps: String,
    pub max_commands: String,
    pub max_tokens: String,
    pub max_minutes: String,
    pub max_attempts: String,
    pub retry_seconds: String,
    pub connect_seconds: String,
    pub idle_seconds: String,
    /// The profile being edited has a stored key.
    pub had_key: bool,
    pub remove_key: bool,
}

impl Default for Draft {
    fn default() -> Self {
        Draft::from_parts(
            None,
            String::new(),
            &Provider::BuiltIn,
            &[],
            None,
            &Capabilities::default(),
            &AgentBudget::default(),
            false,
        )
    }
}

/// Minutes with up to three decimals, in integer arithmetic (float parsing
/// and formatting would cost the UI's wasm budget several KB).
fn minutes_text(ms: u64) -> String {
    let (whole, thousandths) = (ms / 60_000, (ms % 60_000 + 30) / 60);
    if thousandths == 0 {
        return whole.to_string();
    }
    if thousandths >= 1000 {
        return (whole + 1).to_string();
    }
    let text = format!("{whole}.{thousandths:03}");
    text.trim_end_matches('0').to_owned()
}

/// `"1.5"` → 90 000 ms; `None` unless above 0 and at most a day.
fn parse_minutes(text: &str) -> Option<u64> {
    let (whole, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if (whole.is_empty() && fraction.is_empty())
        || fraction.len() > 3
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut thousandths: u64 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    for _ in fraction.len()..3 {
        thousandths *= 10;
    }
    let ms = whole.checked_mul(60_000)? + thousandths * 60;
    (ms > 0 && ms <= 24 * 60 * 60_000).then_some(ms)
}

impl Draft {
    #[allow(clippy::too_many_arguments)]
    fn from_parts(
        id: Option<ProfileId>,
        name: String,
        provider: &Provider,
        env: &[(String, String)],
        key_env: Option<&str>,
        capabilities: &Capabilities,
        budget: &AgentBudget,
        had_key: bool,
    ) -> Draft {
        let (base_url, model) = match provider {
            Provider::BuiltIn | Provider::Local { .. } => (String::new(), String::new()),
            Provider::OpenAiCompatible { base_url, model }
            | Provider::Anthropic { base_url, model } => (base_url.clone(), model.clone()),
        };
        let local = matches!(provider, Provider::Local { .. }).then(|| provider.clone());
        Draft {
            id,
            name,
            kind: Kind::of(provider),
            base_url,
            model,
            local,
            local_facts: None,
            sampling: Vec::new(),
            env: env
                .iter()
                .map(|(k, v)| format!("{k}={v}\n"))
                .collect::<String>(),
            key_env: key_env.unwrap_or_default().to_owned(),
            tools: Tool::ALL.map(|t| capabilities.tools.contains(&t)),
            js: capabilities.js,
            max_steps: budget.max_steps.to_string(),
            max_commands: budget.max_commands.to_string(),
            max_tokens: budget.max_tokens.to_string(),
            max_minutes: minutes_text(budget.max_wall_ms),
            max_attempts: budget.max_attempts.to_string(),
            retry_seconds: (budget.max_retry_ms / 1000).to_string(),
            connect_seconds: (budget.connect_timeout_ms / 1000).to_string(),
            idle_seconds: (budget.idle_timeout_ms / 1000).to_string(),
            had_key,
            remove_key: false,
        }
    }

    pub fn edit(profile: &ProfileSummary) -> Draft {
        let mut draft = Draft::from_parts(
            Some(profile.id),
            profile.name.clone(),
            &profile.provider,
            &profile.env,
            profile.key_env.as_deref(),
            &profile.capabilities,
            &profile.budget,
            profile.has_key,
        );
        draft.local_facts = profile.local_facts.clone();
        draft.sampling = profile.sampling.clone();
        draft
    }

    /// The message to send, or every problem found, per field, in `l`.
    pub fn build(&self, api_key: &str, l: Locale) -> Result<ProfileInput, Vec<(Field, String)>> {
        let mut errors = Vec::new();
        let at_most = |n: usize| tf_in(l, Msg::AtMostBytes, &[&n.to_string()]);
        let name = self.name.trim().to_owned();
        if name.is_empty() {
            errors.push((Field::Name, t(l, Msg::EnterName).to_owned()));
        } else if name.len() > limits::MAX_NAME_BYTES {
            errors.push((Field::Name, at_most(limits::MAX_NAME_BYTES)));
        }
        let provider = match self.kind {
            Kind::BuiltIn => Provider::BuiltIn,
            Kind::Local => match &self.local {
                Some(local) => local.clone(),
                None => {
                    errors.push((Field::ModelFile, t(l, Msg::ChooseModelFile).to_owned()));
                    Provider::BuiltIn
                }
            },
            kind => {
                let base_url = self.base_url.trim().to_owned();
                let model = self.model.trim().to_owned();
                if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                    errors.push((Field::BaseUrl, t(l, Msg::UrlScheme).to_owned()));
                } else if base_url.len() > limits::MAX_URL_BYTES {
                    errors.push((Field::BaseUrl, at_most(limits::MAX_URL_BYTES)));
                }
                if model.is_empty() {
                    errors.push((Field::Model, t(l, Msg::EnterModel).to_owned()));
                } else if model.len() > limits::MAX_MODEL_BYTES {
                    errors.push((Field::Model, at_most(limits::MAX_MODEL_BYTES)));
                }
                if kind == Kind::OpenAi {
                    Provider::OpenAiCompatible { base_url, model }
                } else {
                    Provider::Anthropic { base_url, model }
                }
            }
        };
        let key = api_key.trim();
        let api_key = if !matches!(self.kind, Kind::BuiltIn | Kind::Local) && !key.is_empty() {
            KeyInput::Set(SecretText(key.to_owned()))
        } else if self.remove_key {
            KeyInput::Clear
        } else {
            KeyInput::Keep
        };
        let env = match parse_env(&self.env, l) {
            Ok(env) => env,
            Err(message) => {
                errors.push((Field::Env, message));
                Vec::new()
            }
        };
        let key_env = self.key_env.trim();
        let key_env = if key_env.is_empty() {
            None
        } else {
            if let Err(message) = check_env_name(key_env, l) {
                errors.push((Field::KeyEnv, message));
            } else if env.iter().any(|(n, _)| n == key_env) {
                errors.push((Field::KeyEnv, tf_in(l, Msg::KeyEnvTaken, &[key_env])));
            }
            let keyless = match api_key {
                KeyInput::Set(_) => false,
                KeyInput::Clear => true,
                KeyInput::Keep => !self.had_key,
            };
            if keyless {
                errors.push((Field::KeyEnv, t(l, Msg::KeyEnvNoKey).to_owned()));
            }
            Some(key_env.to_owned())
        };
        let tools = Tool::ALL
            .into_iter()
            .zip(self.tools)
            .filter_map(|(t, on)| on.then_some(t))
            .collect();
        let max_steps = whole::<u32>(&self.max_steps, Field::MaxSteps, &mut errors, l);
        let max_commands = whole::<u32>(&self.max_commands, Field::MaxCommands, &mut errors, l);
        let max_tokens = whole::<u64>(&self.max_tokens, Field::MaxTokens, &mut errors, l);
        let max_wall_ms = match parse_minutes(&self.max_minutes) {
            Some(ms) => ms,
            None => {
                errors.push((Field::MaxMinutes, t(l, Msg::EnterMinutes).to_owned()));
                0
            }
        };
        let max_attempts = bounded(
            &self.max_attempts,
            Field::MaxAttempts,
            limits::MAX_ATTEMPTS.into(),
            &mut errors,
            l,
        ) as u32;
        let mut seconds = |text: &str, field, max| 1000 * bounded(text, field, max, &mut errors, l);
        let max_retry_ms = seconds(
            &self.retry_seconds,
            Field::RetrySeconds,
            limits::MAX_RETRY_SECONDS,
        );
        let connect_timeout_ms = seconds(
            &self.connect_seconds,
            Field::ConnectSeconds,
            limits::MAX_TIMEOUT_SECONDS,
        );
        let idle_timeout_ms = seconds(
            &self.idle_seconds,
            Field::IdleSeconds,
            limits::MAX_TIMEOUT_SECONDS,
        );
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ProfileInput {
            id: self.id,
            name,
            provider,
            api_key,
            env,
            key_env,
            capabilities: Capabilities { tools, js: self.js },
            budget: AgentBudget {
                max_steps,
                max_commands,
                max_tokens,
                max_wall_ms,
                max_attempts,
                max_retry_ms,
                connect_timeout_ms,
                idle_timeout_ms,
            },
            sampling: if self.kind == Kind::Local {
                self.sampling.clone()
            } else {
                Vec::new()
            },
        })
    }
}

fn whole<T: std::str::FromStr + Default + PartialOrd>(
    text: &str,
    field: Field,
    errors: &mut Vec<(Field, String)>,
    l: Locale,
) -> T {
    match text.trim().parse::<T>() {
        Ok(n) if n > T::default() => n,
        _ => {
            errors.push((field, t(l, Msg::EnterWhole).to_owned()));
            T::default()
        }
    }
}

/// A whole number from 1 to `max`.
fn bounded(
    text: &str,
    field: Field,
    max: u64,
    errors: &mut Vec<(Field, String)>,
    l: Locale,
) -> u64 {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => n,
        _ => {
            errors.push((field, tf_in(l, Msg::EnterUpTo, &[&max.to_string()])));
            0
        }
    }
}

fn check_env_name(name: &str, l: Locale) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= limits::MAX_ENV_NAME_BYTES
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    if !valid {
        return Err(tf_in(l, Msg::NotVarName, &[name]));
    }
    if RESERVED_ENV.contains(&name) {
        return Err(tf_in(l, Msg::ReservedVar, &[name]));
    }
    Ok(())
}

/// One `NAME=value` per line; blank lines and lines starting with `#` are
/// skipped. Every problem is reported, each with its line number.
pub fn parse_env(text: &str, l: Locale) -> Result<Vec<(String, String)>, String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut problems = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let n = (index + 1).to_string();
        let problem = |message: &str| tf_in(l, Msg::LineProblem, &[&n, message]);
        let Some((name, value)) = line.split_once('=') else {
            problems.push(problem(t(l, Msg::WriteNameValue)));
            continue;
        };
        let name = name.trim();
        if let Err(message) = check_env_name(name, l) {
            problems.push(problem(&message));
            continue;
        }
        if vars.iter().any(|(v, _)| v == name) {
            problems.push(problem(&tf_in(l, Msg::SetTwice, &[name])));
            continue;
        }
        if value.len() > limits::MAX_ENV_VALUE_BYTES {
            problems.push(problem(&tf_in(
                l,
                Msg::ValueTooLong,
                &[&limits::MAX_ENV_VALUE_BYTES.to_string()],
            )));
            continue;
        }
        vars.push((name.to_owned(), value.to_owned()));
    }
    if vars.len() > limits::MAX_ENV_VARS {
        problems.push(tf_in(
            l,
            Msg::AtMostVars,
            &[&limits::MAX_ENV_VARS.to_string()],
        ));
    }
    if problems.is_empty() {
        Ok(vars)
    } else {
        Err(problems.join(" "))
    }
}

/// The form's fields, one signal each so typing touches one input.
#[derive(Clone, Copy)]
struct Form {
    id: RwSignal<Option<ProfileId>>,
    name: RwSignal<String>,
    kind: RwSignal<Kind>,
    base_url: RwSignal<String>,
    model: RwSignal<String>,
    /// `Ui::local_name` and `Ui::local_spec`.
    local_name: RwSignal<String>,
    local_spec: RwSignal<String>,
    local_said: RwSignal<String>,
    sampling: [RwSignal<String>; 4],
    /// The only place the typed key lives; emptied after a save and on close.
    api_key: RwSignal<String>,
    env: RwSignal<String>,
    key_env: RwSignal<String>,
    tools: [RwSignal<bool>; 4],
    js: RwSignal<bool>,
    max_steps: RwSignal<String>,
    max_commands: RwSignal<String>,
    max_tokens: RwSignal<String>,
    max_minutes: RwSignal<String>,
    max_attempts: RwSignal<String>,
    retry_seconds: RwSignal<String>,
    connect_seconds: RwSignal<String>,
    idle_seconds: RwSignal<String>,
    had_key: RwSignal<bool>,
    remove_key: RwSignal<bool>,
    errors: RwSignal<Vec<(Field, String)>>,
}

impl Form {
    fn new(ui: Ui, api_key: RwSignal<String>) -> Form {
        let d = Draft::default();
        Form {
            id: RwSignal::new(d.id),
            name: RwSignal::new(d.name),
            kind: RwSignal::new(d.kind),
            base_url: RwSignal::new(d.base_url),
            model: RwSignal::new(d.model),
            local_name: ui.local_name,
            local_spec: ui.local_spec,
            local_said: ui.local_said,
            sampling: ui.local_sampling,
            api_key,
            env: RwSignal::new(d.env),
            key_env: RwSignal::new(d.key_env),
            tools: d.tools.map(RwSignal::new),
            js: RwSignal::new(d.js),
            max_steps: RwSignal::new(d.max_steps),
            max_commands: RwSignal::new(d.max_commands),
            max_tokens: RwSignal::new(d.max_tokens),
            max_minutes: RwSignal::new(d.max_minutes),
            idle_seconds: RwSignal::new(d.idle_seconds),
            connect_seconds: RwSignal::new(d.connect_seconds),
            retry_seconds: RwSignal::new(d.retry_seconds),
            max_attempts: RwSignal::new(d.max_attempts),
            had_key: RwSignal::new(d.had_key),
            remove_key: RwSignal::new(d.remove_key),
            errors: RwSignal::new(Vec::new()),
        }
    }

    fn load(&self, d: Draft) {
        self.id.set(d.id);
        self.name.set(d.name);
        self.kind.set(d.kind);
        self.base_url.set(d.base_url);
        self.model.set(d.model);
        self.local_said.set(d.local_facts.unwrap_or_default());
        let (name, spec) = match d.local {
            Some(Provider::Local { name, spec }) => (name, spec),
            _ => Default::default(),
        };
        self.local_name.set(name);
        self.local_spec.set(spec);
        for (i, signal) in self.sampling.iter().enumerate() {
            signal.set(d.sampling.get(i).cloned().unwrap_or_default());
        }
        self.api_key.set(String::new());
        self.env.set(d.env);
        self.key_env.set(d.key_env);
        for (signal, on) in self.tools.iter().zip(d.tools) {
            signal.set(on);
        }
        self.js.set(d.js);
        self.max_steps.set(d.max_steps);
        self.max_commands.set(d.max_commands);
        self.max_tokens.set(d.max_tokens);
        self.max_minutes.set(d.max_minutes);
        self.idle_seconds.set(d.idle_seconds);
        self.connect_seconds.set(d.connect_seconds);
        self.retry_seconds.set(d.retry_seconds);
        self.max_attempts.set(d.max_attempts);
        self.had_key.set(d.had_key);
        self.remove_key.set(d.remove_key);
        self.errors.set(Vec::new());
    }

    fn draft(&self) -> Draft {
        Draft {
            id: self.id.get_untracked(),
            name: self.name.get_untracked(),
            kind: self.kind.get_untracked(),
            base_url: self.base_url.get_untracked(),
            model: self.model.get_untracked(),
            local: self
                .local_spec
                .with_untracked(|s| !s.is_empty())
                .then(|| Provider::Local {
                    name: self.local_name.get_untracked(),
                    spec: self.local_spec.get_untracked(),
                }),
            local_facts: None,
            sampling: self.sampling.iter().map(|s| s.get_untracked()).collect(),
            env: self.env.get_untracked(),
            key_env: self.key_env.get_untracked(),
            tools: self.tools.map(|s| s.get_untracked()),
            js: self.js.get_untracked(),
            max_steps: self.max_steps.get_untracked(),
            max_commands: self.max_commands.get_untracked(),
            max_tokens: self.max_tokens.get_untracked(),
            max_minutes: self.max_minutes.get_untracked(),
            idle_seconds: self.idle_seconds.get_untracked(),
            connect_seconds: self.connect_seconds.get_untracked(),
            retry_seconds: self.retry_seconds.get_untracked(),
            max_attempts: self.max_attempts.get_untracked(),
            had_key: self.had_key.get_untracked(),
            remove_key: self.remove_key.get_untracked(),
        }
    }

    fn error(&self, field: Field) -> Option<String> {
        self.errors
            .with(|e| e.iter().find(|(f, _)| *f == field).map(|(_, m)| m.clone()))
    }

    fn clear_error(&self, field: Field) {
        if self
            .errors
            .with_untracked(|e| e.iter().any(|(f, _)| *f == field))
        {
            self.errors.update(|e| e.retain(|(f, _)| *f != field));
        }
    }

    fn set_preset(&self, preset: &Preset) {
        self.kind.set(preset.kind);
        self.base_url.set(preset.base_url.to_owned());
        self.clear_error(Field::BaseUrl);
    }

    fn set_kind(&self, kind: Kind) {
        let old = self.kind.get_untracked();
        let url = self.base_url.get_untracked();
        if url.trim().is_empty() || url.trim() == old.default_url() {
            self.base_url.set(kind.default_url().to_owned());
        }
        self.kind.set(kind);
    }
}

/// The header button and the dialog it opens.
#[component]
pub fn Profiles(ui: Ui) -> impl IntoView {
    let dialog = NodeRef::<html::Dialog>::new();
    let opener = NodeRef::<html::Button>::new();
    // The form's key field, here so that closing the dialog empties it.
    let api_key = RwSignal::new(String::new());
    // What the dialog last said about a save, delete or selection.
    let said = RwSignal::new(String::new());
    let pending_save = RwSignal::new(None::<PendingSave>);

    // Its content, the form's state included, is built the first time it
    // opens: built with the page, it was a fifth of a first visit's
    // render, for a dialog most visits never open.
    let opened = RwSignal::new(false);
    let open = move |_| {
        said.set(String::new());
        set_if_changed(opened, true);
        if let Some(d) = dialog.get_untracked() {
            if !d.open() {
                let _ = d.show_modal();
            }
        }
    };
    let close = move || {
        if let Some(d) = dialog.get_untracked() {
            d.close();
        }
    };

    view! {
        <button
            type="button"
            class="profiles-open"
            aria-haspopup="dialog"
            node_ref=opener
            on:click=handler(open)
        >
            {text(Msg::Profiles)}
        </button>
        <dialog
            class="profiles"
            aria-labelledby="profiles-title"
            node_ref=dialog
            on:click=handler(move |event: web_sys::MouseEvent| {
                // A tap on the backdrop closes it: the click lands on the
                // dialog itself, outside its box.
                let Some(d) = dialog.get_untracked() else { return };
                let (x, y) = (event.offset_x(), event.offset_y());
                let outside = x < 0 || y < 0 || x > d.offset_width() || y > d.offset_height();
                let me: &web_sys::EventTarget = d.as_ref();
                if outside && event.target().as_ref() == Some(me) {
                    d.close();
                }
            })
            on:close=handler(move |_| {
                // The key never outlives the dialog.
                api_key.set(String::new());
                if let Some(button) = opener.get_untracked() {
                    let _ = button.focus();
                }
            })
        >
            <div class="dialog-head">
                <h2 id="profiles-title">{text(Msg::Profiles)}</h2>
                <button type="button" class="dialog-close" on:click=handler(move |_| close())>
                    {text(Msg::Close)}
                </button>
            </div>
            <p class="dialog-said" role="status">{move || said.get()}</p>
            {move || opened.get().then(|| crate::lazy::shown(move || editor(ui, api_key, said, pending_save)))}
        </dialog>
    }
}

/// The dialog's content and its form's state, in a module of its own
/// ([`crate::lazy`]): most visits never open it. Built once, when the
/// dialog first opens, and kept while the page lives.
#[leptos::wasm_split::wasm_split(profiles, fallible, wasm_split_path = leptos::wasm_split)]
fn editor(
    ui: Ui,
    api_key: RwSignal<String>,
    said: RwSignal<String>,
    pending_save: RwSignal<Option<PendingSave>>,
) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    let form = Form::new(ui, api_key);
    // A new list after a save is the controller's answer. (Only the form
    // sends a save, so nothing is pending before this first runs.)
    Effect::new(move |first: Option<()>| {
        ui.profiles.track();
        if first.is_some() {
            if let Some(pending) = pending_save.get_untracked() {
                pending_save.set(None);
                form.load(Draft::default());
                said.set(i18n::now_f(Msg::Saved, &[&pending.name]));
            }
        }
    });
    // So is a profile warning that was not there when the save was sent: the
    // save was refused, and a later list (another profile deleted or chosen)
    // must not be taken for its confirmation.
    Effect::new(move |_| {
        let refused = ui.notices.with(|list| {
            pending_save.with_untracked(|pending| {
                pending.as_ref().is_some_and(|p| {
                    profile_warnings(list).any(|n| !p.seen.contains(&(n.key.clone(), n.revision)))
                })
            })
        });
        if refused {
            pending_save.set(None);
        }
    });
    Ok(view! {
        <ProfileErrors ui />
        {crate::lazy::shown(move || list(ui, form, said))}
        <ProfileForm form said pending_save notices=ui.notices />
    }
    .into_any())
}

/// The saved profiles, in a module of their own: the editor's module
/// with them was over the split modules' budget (`cargo xtask build`).
#[leptos::wasm_split::wasm_split(profile_list, fallible, wasm_split_path = leptos::wasm_split)]
fn list(
    ui: Ui,
    form: Form,
    said: RwSignal<String>,
) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    Ok(view! { <ProfileList ui form said /> }.into_any())
}

/// A save sent to the controller and not yet answered.
#[derive(Clone)]
struct PendingSave {
    name: String,
    /// The profile warnings already shown when it was sent.
    seen: Vec<(String, u64)>,
}

/// Controller warnings and errors about profiles.
fn profile_warnings(list: &[NoticeItem]) -> impl Iterator<Item = &NoticeItem> {
    list.iter()
        .filter(|n| n.key.starts_with("controller:profile") && n.level != Level::Info)
}

#[component]
fn ProfileErrors(ui: Ui) -> impl IntoView {
    // Controller warnings and errors about profiles (notice key `profiles`)
    // are shown here too: the page's notices are behind the modal dialog.
    let notices = move || {
        ui.notices.with(|list| {
            profile_warnings(list)
                .map(|n| n.message.clone())
                .collect::<Vec<_>>()
        })
    };
    view! {
        <div class="dialog-errors" aria-live="polite">
            {move || {
                ui.profile_errors
                    .get()
                    .into_iter()
                    .map(|e| tf(Msg::UnreadableProfile, &[&e]))
                    .chain(notices())
                    .map(|m| view! { <p class="field-error">{m}</p> })
                    .collect_view()
            }}
        </div>
    }
}

#[component]
fn ProfileList(ui: Ui, form: Form, said: RwSignal<String>) -> impl IntoView {
    let selected = move || ui.lifecycle().and_then(|l| l.selected_profile);
    let confirming = RwSignal::new(None::<ProfileId>);
    view! {
        <h3>{text(Msg::SavedProfiles)}</h3>
        <Show
            when=move || !ui.profiles.with(Vec::is_empty)
            fallback=move || {
                view! {
                    <p class="empty">
                        {move || {
                            tr(if ui.profiles_loaded.get() {
                                Msg::NoProfilesYet
                            } else {
                                Msg::WaitingForController
                            })
                        }}
                    </p>
                }
            }
        >
            <ul class="profile-list" aria-label=text(Msg::SavedProfiles)>
                <For
                    each=move || ui.profiles.get()
                    key=|p| (p.id, p.revision)
                    let:profile
                >
                    {
                        let id = profile.id;
                        let name = profile.name.clone();
                        let is_selected = move || selected() == Some(id);
                        let kind = Kind::of(&profile.provider);
                        let model = profile.provider.model().map(str::to_owned);
                        let key_text = if profile.has_key { Msg::ApiKeySet } else { Msg::NoApiKey };
                        let edit_profile = profile.clone();
                        let (name2, name3) = (name.clone(), name.clone());
                        view! {
                            <li
                                class="profile"
                                aria-current=move || is_selected().then_some("true")
                            >
                                <p class="profile-name">
                                    <strong>{name.clone()}</strong>
                                    <Show when=is_selected>
                                        {text(Msg::SelectedMark)}
                                    </Show>
                                </p>
                                <p class="profile-meta">
                                    {text(kind.label())}
                                    {model.map(|m| format!(" · {m}"))}
                                    " · "
                                    {text(key_text)}
                                </p>
                                <div class="profile-actions">
                                    <button
                                        type="button"
                                        disabled=is_selected
                                        on:click=handler(move |_| {
                                            if io::select_profile(id) {
                                                said.set(i18n::now_f(Msg::LaunchesUse, &[&name2]));
                                            } else {
                                                said.set(i18n::now(Msg::NotSentNoController).into());
                                            }
                                        })
                                    >
                                        {text(Msg::UseForSession)}
                                    </button>
                                    <button
                                        type="button"
                                        on:click=handler(move |_| {
                                            form.load(Draft::edit(&edit_profile));
                                            said.set(String::new());
                                            focus(Field::Name.id());
                                        })
                                    >
                                        {text(Msg::Edit)}
                                    </button>
                                    <Show
                                        when=move || confirming.get() == Some(id)
                                        fallback=move || {
                                            view! {
                                                <button type="button" on:click=handler(move |_| confirming.set(Some(id)))>
                                                    {text(Msg::Delete)}
                                                </button>
                                            }
                                        }
                                    >
                                        {
                                            let name3 = name3.clone();
                                            view! {
                                                <span class="confirm">
                                                    {
                                                        let name3 = name3.clone();
                                                        move || tf(Msg::DeleteQuestion, &[&name3])
                                                    }
                                                    <button
                                                        type="button"
                                                        class="danger"
                                                        on:click=handler({
                                                            let name3 = name3.clone();
                                                            move |_| {
                                                                confirming.set(None);
                                                                if io::delete_profile(id) {
                                                                    if form.id.get_untracked() == Some(id) {
                                                                        form.load(Draft::default());
                                                                    }
                                                                    said.set(i18n::now_f(Msg::Deleting, &[&name3]));
                                                                } else {
                                                                    said.set(i18n::now(Msg::NotSentNoController).into());
                                                                }
                                                            }
                                                        })
                                                    >
                                                        {text(Msg::ConfirmDelete)}
                                                    </button>
                                                    <button type="button" on:click=handler(move |_| confirming.set(None))>
                                                        {text(Msg::Cancel)}
                                                    </button>
                                                </span>
                                            }
                                        }
                                    </Show>
                                </div>
                            </li>
                        }
                    }
                </For>
            </ul>
        </Show>
    }
}

fn focus(id: &str) {
    if let Some(element) = document().get_element_by_id(id) {
        if let Ok(element) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element) {
            let _ = element.focus();
        }
    }
}

/// `aria-describedby` for a field: its hint (if any) and its error (if any).
fn described(form: Form, field: Field, hint: Option<&'static str>) -> impl Fn() -> Option<String> {
    move || {
        let mut ids: Vec<String> = hint.map(str::to_owned).into_iter().collect();
        if form.error(field).is_some() {
            ids.push(field.error_id());
        }
        (!ids.is_empty()).then(|| ids.join(" "))
    }
}

#[component]
fn FieldError(form: Form, field: Field) -> impl IntoView {
    move || {
        form.error(field)
            .map(|m| view! { <p id=field.error_id() class="field-error">{m}</p> })
    }
}

/// `aria-invalid` for a field, one closure type for every field.
fn invalid(form: Form, field: Field) -> impl Fn() -> Option<&'static str> {
    move || form.error(field).map(|_| "true")
}

/// The model file of a local profile: a file picker whose file the
/// controller copies into the private file system and reads the header of,
/// then what it found (the facts, or why the file cannot be a model).
fn local_model_field(form: Form) -> impl IntoView {
    let field = Field::ModelFile;
    // Shown only while the provider is a local model, by the stylesheet
    // (`.local-model-field`): a reactive `Show` here cost the page's wasm
    // about 1 KB gzip.
    view! {
        <div class="field local-model-field">
            <label for=field.id()>{text(Msg::ModelFile)}</label>
            <input
                id=field.id()
                type="file"
                accept=".gguf"
                aria-invalid=invalid(form, field)
                aria-describedby=described(form, field, Some("profile-model-facts"))
                on:change:target=move |ev| {
                    if let Some(file) = ev.target().files().and_then(|f| f.get(0)) {
                        form.local_spec.set(String::new());
                        form.local_said.set(String::new());
                        form.clear_error(field);
                        io::send_model_file(&file);
                        // Emptied once handed over, so that picking the same
                        // file again (after an import that failed) is a
                        // change too; what was read is said below it.
                        ev.target().set_value("");
                    }
                }
            />
            <p id="profile-model-facts" class="hint" role="status">{move || form.local_said.get()}</p>
            <FieldError form field />
        </div>
        <fieldset class="budget local-model-field">
            <legend>{text(Msg::Sampling)}</legend>
            {[
                (Field::Temperature, Msg::Temperature),
                (Field::TopP, Msg::TopP),
                (Field::ReplyTokens, Msg::ReplyTokens),
                (Field::ContextSize, Msg::ContextSize),
            ]
                .into_iter()
                .zip(form.sampling)
                .map(|((field, label), value)| view! { <TextField form field label value inputmode="decimal" /> })
                .collect_view()}
        </fieldset>
    }
}

/// A labelled single-line text input bound to `value`.
#[component]
fn TextField(
    form: Form,
    field: Field,
    label: Msg,
    value: RwSignal<String>,
    #[prop(optional)] hint: Option<&'static str>,
    #[prop(optional)] hint_text: Option<Msg>,
    #[prop(default = "text")] kind: &'static str,
    #[prop(optional)] inputmode: Option<&'static str>,
) -> impl IntoView {
    view! {
        <div class="field">
            <label for=field.id()>{text(label)}</label>
            <input
                id=field.id()
                type=kind
                inputmode=inputmode
                autocomplete="off"
                spellcheck="false"
                aria-invalid=invalid(form, field)
                aria-describedby=described(form, field, hint)
                prop:value=move || value.get()
                on:input:target=move |ev| {
                    value.set(ev.target().value());
                    form.clear_error(field);
                }
            />
            {hint.zip(hint_text).map(|(id, msg)| view! { <p id=id class="hint">{text(msg)}</p> })}
            <FieldError form field />
        </div>
    }
}

/// Fills the wire format and base URL from a known server; shows how to let
/// this page through where that server needs it.
#[component]
fn PresetSelect(form: Form) -> impl IntoView {
    let chosen = move || {
        form.base_url
            .with(|url| Preset::matching(form.kind.get(), url))
    };
    let hint = move || {
        let cors = PRESETS[chosen()?].cors?;
        let origin = window().location().origin().unwrap_or_default();
        Some(tf(cors, &[&origin]))
    };
    view! {
        <div class="field">
            <label for="profile-preset">{text(Msg::Preset)}</label>
            <select
                id="profile-preset"
                aria-describedby="profile-preset-hint"
                on:change:target=move |ev| {
                    if let Some(p) = ev.target().value().parse::<usize>().ok().and_then(|i| PRESETS.get(i)) {
                        form.set_preset(p);
                    }
                }
                prop:value=move || chosen().map(|i| i.to_string()).unwrap_or_default()
            >
                <option value="" selected=move || chosen().is_none()>{text(Msg::CustomPreset)}</option>
                {PRESETS
                    .iter()
                    .enumerate()
                    .map(|(i, p)| view! { <option value=i.to_string() selected=move || chosen() == Some(i)>{p.name}</option> })
                    .collect_view()}
            </select>
            <p id="profile-preset-hint" class="hint">{hint}</p>
        </div>
    }
}

/// A labelled checkbox bound to `on`.
fn check(label: impl IntoView + 'static, on: RwSignal<bool>) -> impl IntoView {
    view! {
        <label class="check">
            <input
                type="checkbox"
                prop:checked=move || on.get()
                on:change:target=move |ev| on.set(ev.target().checked())
            />
            {label}
        </label>
    }
}

#[component]
fn ProfileForm(
    form: Form,
    said: RwSignal<String>,
    pending_save: RwSignal<Option<PendingSave>>,
    notices: RwSignal<Vec<NoticeItem>>,
) -> impl IntoView {
    let editing = move || form.id.get().is_some();
    let title = move || {
        tr(if editing() {
            Msg::EditProfile
        } else {
            Msg::NewProfile
        })
    };
    let remote = move || !matches!(form.kind.get(), Kind::BuiltIn | Kind::Local);
    let submit = move |event: web_sys::SubmitEvent| {
        event.prevent_default();
        let draft = form.draft();
        let locale = i18n::locale_untracked();
        let built = form.api_key.with_untracked(|key| draft.build(key, locale));
        match built {
            Err(errors) => {
                let first = errors.first().map(|(f, _)| *f);
                form.errors.set(errors);
                said.set(t(locale, Msg::NotSavedFix).into());
                if let Some(field) = first {
                    focus(field.id());
                }
            }
            Ok(input) => {
                let name = input.name.clone();
                let sent = io::save_profile(input);
                // The key is gone from the page either way.
                form.api_key.set(String::new());
                if sent {
                    // The form keeps what was typed until the controller's
                    // new list says it was saved: a refused save leaves it
                    // there to be mended.
                    let seen = notices.with_untracked(|list| {
                        profile_warnings(list)
                            .map(|n| (n.key.clone(), n.revision))
                            .collect()
                    });
                    pending_save.set(Some(PendingSave {
                        name: name.clone(),
                        seen,
                    }));
                    said.set(tf_in(locale, Msg::Saving, &[&name]));
                } else {
                    said.set(t(locale, Msg::NotSavedNoController).into());
                }
            }
        }
    };
    view! {
        <form class="profile-form" aria-labelledby="profile-form-title" novalidate=true on:submit=handler(submit)>
            <div class="dialog-head">
                <h3 id="profile-form-title">{title}</h3>
                <Show when=editing>
                    <button type="button" on:click=handler(move |_| form.load(Draft::default()))>
                        {text(Msg::CancelEditing)}
                    </button>
                </Show>
            </div>
            <TextField form field=Field::Name label=Msg::Name value=form.name />
            <PresetSelect form />
            <div class="field">
                <label for="profile-provider">{text(Msg::Provider)}</label>
                <select
                    id="profile-provider"
                    on:change:target=move |ev| form.set_kind(Kind::from_value(&ev.target().value()))
                    prop:value=move || form.kind.get().value()
                >
                    {Kind::ALL
                        .map(|k| {
                            view! {
                                <option value=k.value() selected=move || form.kind.get() == k>
                                    {text(k.label())}
                                </option>
                            }
                        })}
                </select>
            </div>
            {local_model_field(form)}
            <Show when=remote>
                <TextField
                    form
                    field=Field::BaseUrl
                    label=Msg::BaseUrl
                    value=form.base_url
                    kind="url"
                    inputmode="url"
                />
                <TextField form field=Field::Model label=Msg::Model value=form.model />
                <div class="field">
                    <label for=Field::ApiKey.id()>{text(Msg::ApiKey)}</label>
                    <input
                        id=Field::ApiKey.id()
                        type="password"
                        autocomplete="off"
                        spellcheck="false"
                        aria-describedby="profile-api-key-hint"
                        prop:value=move || form.api_key.get()
                        on:input:target=move |ev| form.api_key.set(ev.target().value())
                    />
                    <p id="profile-api-key-hint" class="hint">
                        {move || {
                            tr(if form.had_key.get() {
                                Msg::KeyStored
                            } else {
                                Msg::KeyNew
                            })
                        }}
                    </p>
                </div>
            </Show>
            <Show when=move || form.had_key.get()>
                {check(text(Msg::RemoveKey), form.remove_key)}
            </Show>
            <div class="field">
                <label for=Field::Env.id()>{text(Msg::EnvVars)}</label>
                <textarea
                    id=Field::Env.id()
                    rows="4"
                    spellcheck="false"
                    autocomplete="off"
                    aria-invalid=invalid(form, Field::Env)
                    aria-describedby=described(form, Field::Env, Some("profile-env-hint"))
                    prop:value=move || form.env.get()
                    on:input:target=move |ev| {
                        form.env.set(ev.target().value());
                        form.clear_error(Field::Env);
                    }
                ></textarea>
                <p id="profile-env-hint" class="hint">
                    {text(Msg::EnvHint)}
                </p>
                <FieldError form field=Field::Env />
            </div>
            <TextField
                form
                field=Field::KeyEnv
                label=Msg::KeyEnvLabel
                value=form.key_env
                hint="profile-key-env-hint"
                hint_text=Msg::KeyEnvHint
            />
            <fieldset>
                <legend>{text(Msg::Tools)}</legend>
                {Tool::ALL
                    .into_iter()
                    .zip(form.tools)
                    .map(|(tool, on)| check(tool.name(), on))
                    .collect_view()}
                {check(text(Msg::AllowJs), form.js)}
            </fieldset>
            <fieldset class="budget">
                <legend>{text(Msg::BudgetPerTurn)}</legend>
                <TextField form field=Field::MaxSteps label=Msg::MaxSteps value=form.max_steps kind="number" inputmode="numeric" />
                <TextField form field=Field::MaxCommands label=Msg::MaxCommands value=form.max_commands kind="number" inputmode="numeric" />
                <TextField form field=Field::MaxTokens label=Msg::MaxTokens value=form.max_tokens kind="number" inputmode="numeric" />
                <TextField form field=Field::MaxMinutes label=Msg::MaxMinutes value=form.max_minutes kind="number" inputmode="decimal" />
            </fieldset>
            <Show when=remote>
                <fieldset class="budget">
                    <legend>{text(Msg::ModelRequests)}</legend>
                    <p class="hint">{text(Msg::ModelRequestsHint)}</p>
                    <TextField form field=Field::MaxAttempts label=Msg::MaxAttempts value=form.max_attempts kind="number" inputmode="numeric" />
                    <TextField form field=Field::RetrySeconds label=Msg::RetrySeconds value=form.retry_seconds kind="number" inputmode="numeric" />
                    <TextField form field=Field::ConnectSeconds label=Msg::ConnectSeconds value=form.connect_seconds kind="number" inputmode="numeric" />
                    <TextField form field=Field::IdleSeconds label=Msg::IdleSeconds value=form.idle_seconds kind="number" inputmode="numeric" />
                </fieldset>
            </Show>
            <button type="submit" class="primary">{text(Msg::SaveProfile)}</button>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_fill_a_valid_remote_profile_and_are_recognised_again() {
        let mut names = std::collections::BTreeSet::new();
        for (i, p) in PRESETS.iter().enumerate() {
            assert!(names.insert(p.name), "{} twice", p.name);
            assert_eq!(Preset::matching(p.kind, p.base_url), Some(i), "{}", p.name);
            assert_eq!(
                Preset::matching(p.kind, &format!(" {}/ ", p.base_url)),
                Some(i)
            );
            let d = Draft {
                name: p.name.into(),
                kind: p.kind,
                base_url: p.base_url.into(),
                model: "m".into(),
                ..Draft::default()
            };
            let input = d.build("", Locale::En).expect(p.name);
            let url = match input.provider {
                Provider::OpenAiCompatible { base_url, .. } => {
                    assert_ne!(p.name, "Anthropic");
                    base_url
                }
                Provider::Anthropic { base_url, .. } => {
                    assert_eq!(p.name, "Anthropic");
                    base_url
                }
                Provider::BuiltIn | Provider::Local { .. } => panic!("{} is remote", p.name),
            };
            assert_eq!(url, p.base_url);
            // Hosted APIs allow browsers; local servers say how.
            assert_eq!(
                p.cors.is_some(),
                url.starts_with("http://localhost"),
                "{}",
                p.name
            );
        }
        assert_eq!(
            Preset::matching(Kind::OpenAi, "http://localhost:11434/v2"),
            None
        );
        assert_eq!(Preset::matching(Kind::Anthropic, OPENAI_DEFAULT_URL), None);
        assert_eq!(Preset::matching(Kind::BuiltIn, ""), None);
    }

    #[test]
    fn env_lines_parse_and_report_every_problem() {
        assert_eq!(
            parse_env("A=1\n\n# note\nB_2= x=y \r\n", Locale::En).unwrap(),
            vec![("A".into(), "1".into()), ("B_2".into(), " x=y ".into())]
        );
        let error = parse_env("novalue\n1X=2\nPWD=/\nA=1\nA=2", Locale::En).unwrap_err();
        for part in ["Line 1", "Line 2", "Line 3", "Line 5"] {
            assert!(error.contains(part), "{error}");
        }
    }

    #[test]
    fn a_valid_draft_builds_and_an_empty_key_keeps_the_stored_one() {
        let mut d = Draft {
            name: " Local ".into(),
            kind: Kind::OpenAi,
            base_url: OPENAI_DEFAULT_URL.into(),
            model: "llama3".into(),
            had_key: true,
            ..Draft::default()
        };
        let input = d.build("", Locale::En).unwrap();
        assert_eq!(input.name, "Local");
        assert_eq!(input.api_key, KeyInput::Keep);
        assert_eq!(input.budget, AgentBudget::default());
        assert_eq!(input.capabilities, Capabilities::default());
        assert_eq!(
            d.build(" sk-1 ", Locale::En).unwrap().api_key,
            KeyInput::Set(SecretText("sk-1".into()))
        );
        d.remove_key = true;
        assert_eq!(d.build("", Locale::En).unwrap().api_key, KeyInput::Clear);
    }

    #[test]
    fn errors_name_their_fields() {
        let d = Draft {
            kind: Kind::Anthropic,
            base_url: "ftp://x".into(),
            env: "bad line".into(),
            key_env: "KEY".into(),
            max_steps: "0".into(),
            max_minutes: "x".into(),
            ..Draft::default()
        };
        let fields: Vec<Field> = d
            .build("", Locale::En)
            .unwrap_err()
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        for f in [
            Field::Name,
            Field::BaseUrl,
            Field::Model,
            Field::Env,
            Field::KeyEnv,
            Field::MaxSteps,
            Field::MaxMinutes,
        ] {
            assert!(fields.contains(&f), "{f:?} in {fields:?}");
        }
    }

    #[test]
    fn retry_and_timeout_fields_are_bounded_like_the_core() {
        let at = |attempts: &str, idle: &str| {
            let mut d = Draft::default();
            d.name = "p".into();
            d.max_attempts = attempts.into();
            d.idle_seconds = idle.into();
            d.build("", Locale::En).map(|p| p.budget)
        };
        let ok = at("10", "600").unwrap();
        assert_eq!((ok.max_attempts, ok.idle_timeout_ms), (10, 600_000));
        ok.check().unwrap();
        for (attempts, idle, field) in [
            ("0", "60", Field::MaxAttempts),
            ("11", "60", Field::MaxAttempts),
            ("4", "0", Field::IdleSeconds),
            ("4", "601", Field::IdleSeconds),
            ("4", "1.5", Field::IdleSeconds),
        ] {
            let errors = at(attempts, idle).unwrap_err();
            assert_eq!(errors.iter().map(|(f, _)| *f).collect::<Vec<_>>(), [field]);
        }
        let too_long = AgentBudget {
            idle_timeout_ms: 601_000,
            ..AgentBudget::default()
        };
        assert!(too_long.check().is_err());
    }

    #[test]
    fn a_summary_round_trips_through_the_form() {
        let summary = ProfileSummary {
            id: "01JD0000000000000000000001".parse().unwrap(),
            revision: 3,
            name: "Claude".into(),
            provider: Provider::Anthropic {
                base_url: ANTHROPIC_DEFAULT_URL.into(),
                model: "claude".into(),
            },
            local_facts: None,
            sampling: vec![],
            has_key: true,
            env: vec![("A".into(), "b".into())],
            key_env: Some("ANTHROPIC_API_KEY".into()),
            capabilities: Capabilities::default(),
            budget: AgentBudget {
                max_wall_ms: 90_000,
                max_attempts: 2,
                max_retry_ms: 30_000,
                connect_timeout_ms: 5_000,
                idle_timeout_ms: 7_000,
                ..AgentBudget::default()
            },
        };
        let draft = Draft::edit(&summary);
        assert_eq!(draft.max_minutes, "1.5");
        assert_eq!(draft.idle_seconds, "7");
        assert_eq!(parse_minutes("10"), Some(600_000));
        assert_eq!(parse_minutes(".25"), Some(15_000));
        assert_eq!(minutes_text(600_000), "10");
        for bad in ["", ".", "0", "-1", "1.2345", "1e3", "1441"] {
            assert_eq!(parse_minutes(bad), None, "{bad}");
        }
        let input = draft.build("", Locale::En).unwrap();
        assert_eq!(input.id, Some(summary.id));
        assert_eq!(input.provider, summary.provider);
        assert_eq!(input.env, summary.env);
        assert_eq!(input.key_env, summary.key_env);
        assert_eq!(input.budget, summary.budget);
        assert_eq!(input.api_key, KeyInput::Keep);
    }

    #[test]
    fn a_local_profile_needs_its_model_file_and_keeps_it_on_edit() {
        let d = Draft {
            name: "Tiny".into(),
            kind: Kind::Local,
            ..Draft::default()
        };
        let errors = d.build("sk-ignored", Locale::En).unwrap_err();
        assert_eq!(errors[0].0, Field::ModelFile);
        let file = lifeline_core::profile::LocalFile {
            name: "tiny.gguf".into(),
            size: 269_120,
            stored_as: "0a1b2c-tiny.gguf".into(),
            architecture: "llama".into(),
            parameters: 129_344,
            context_length: 1024,
            model_name: None,
        };
        let sampling = lifeline_core::profile::Sampling::for_model(1024);
        let provider = lifeline_core::profile::LocalModel { file, sampling }.provider();
        let d = Draft {
            local: Some(provider.clone()),
            sampling: sampling.texts(),
            ..d
        };
        let input = d.build("sk-ignored", Locale::En).unwrap();
        assert_eq!(input.provider, provider);
        // The typed sampling goes to the controller as text, to be read
        // and checked there; other providers send none.
        assert_eq!(input.sampling, ["0.7", "0.9", "512", "1024"]);
        let remote = Draft {
            kind: Kind::OpenAi,
            base_url: "http://localhost:11434/v1".into(),
            model: "q".into(),
            ..d.clone()
        };
        assert!(remote.build("", Locale::En).unwrap().sampling.is_empty());
        // A local model has no key: a typed one is not sent.
        assert_eq!(input.api_key, KeyInput::Keep);
        let again = Draft::from_parts(
            None,
            "Tiny".into(),
            &provider,
            &[],
            None,
            &Capabilities::default(),
            &AgentBudget::default(),
            false,
        );
        assert_eq!(again.kind, Kind::Local);
        assert_eq!(again.build("", Locale::En).unwrap().provider, provider);
    }
}
