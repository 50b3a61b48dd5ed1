//! Environment profiles and the rules for using one at a launch checkpoint
//! (reference 003, criteria 6 to 8).
//!
//! A profile says which provider answers, which tools the agent may use, the
//! environment variables its commands see and the budget of a turn. It holds
//! credential *references* only ([`CredentialId`]); the secret behind one is
//! read by the controller shell at the launch checkpoint and nowhere earlier
//! ([`crate::session`] asks for it with an effect).
//!
//! Profiles live in their own store, outside the journal: an execution
//! records the identity and revision it launched with ([`ProfileRef`]), and a
//! resume looks that identity up again to get its *current* environment.

use crate::flat::FlatSet;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

use crate::id::{CredentialId, ProfileId};
use crate::store_fault::StoreFault;

/// The executor that owns profiles created in this browser. A profile with
/// another owner (imported, or written by a newer build) is never used.
pub const OWNER: &str = "lifeline-browser";

/// Bounds on a profile, so a corrupt or hostile record stays small.
pub mod limits {
    pub const MAX_NAME_BYTES: usize = 200;
    pub const MAX_URL_BYTES: usize = 2048;
    pub const MAX_MODEL_BYTES: usize = 200;
    pub const MAX_ENV_VARS: usize = 64;
    pub const MAX_ENV_NAME_BYTES: usize = 128;
    pub const MAX_ENV_VALUE_BYTES: usize = 8 * 1024;
    /// Attempts at one refused provider request.
    pub const MAX_ATTEMPTS: u32 = 10;
    /// Seconds after a request's first attempt within which a retry may
    /// start.
    pub const MAX_RETRY_SECONDS: u64 = 30 * 60;
    /// Seconds a request may wait for its response, or a reply for its
    /// next byte.
    pub const MAX_TIMEOUT_SECONDS: u64 = 10 * 60;
    /// The smallest and largest context a local model is loaded with.
    pub const MIN_LOCAL_CONTEXT: u32 = 128;
    pub const MAX_LOCAL_CONTEXT: u64 = 131_072;
    /// The largest facts string kept from a model file's header.
    pub const MAX_LOCAL_FACT_BYTES: usize = 200;
    /// The largest local model spec (file facts and sampling as JSON).
    pub const MAX_LOCAL_SPEC_BYTES: usize = 2048;
}

/// Which backend answers a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Provider {
    /// The deterministic offline agent of DESIGN.md: no network, no key.
    BuiltIn,
    OpenAiCompatible {
        base_url: String,
        model: String,
    },
    Anthropic {
        base_url: String,
        model: String,
    },
    /// A GGUF model file run in this browser through llama.cpp compiled to
    /// WebAssembly: no server, no key.
    Local {
        /// The model's own name from its header, or the file's.
        name: String,
        /// A [`LocalModel`] as JSON text (see [`LocalModel::provider`]).
        /// Text, so the page keeps, shows and sends back a local profile
        /// without a decoder of its own for the file's facts: those cost
        /// the UI's wasm about 3 KB gzip, more than the form itself.
        spec: String,
    },
}

/// What a local profile holds: the model file and how it samples.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct LocalModel {
    pub file: LocalFile,
    #[serde(default)]
    pub sampling: Sampling,
}

impl LocalModel {
    /// The profile's provider for this model.
    pub fn provider(&self) -> Provider {
        Provider::Local {
            name: self
                .file
                .model_name
                .clone()
                .unwrap_or_else(|| self.file.name.clone()),
            // A struct of strings and numbers always encodes.
            spec: lifeline_encode::to_string(self),
        }
    }

    /// The model a spec text describes (what [`LocalModel::provider`]
    /// wrote), read by `lifeline_decode` as serde's derive reads it.
    /// `None` for a text that does not read.
    pub fn from_spec(spec: &str) -> Option<LocalModel> {
        lifeline_decode::from_str(spec).ok()
    }
}

/// A model file the user picked, copied into the origin's private file
/// system so it survives reloads and works offline. The header facts are
/// read once when it is picked (`lifeline_provider::gguf`) and kept here, so
/// the profile shows them without reading the file again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct LocalFile {
    /// The file's name as picked.
    pub name: String,
    pub size: u64,
    /// The copy's name in the private file system's model folder.
    pub stored_as: String,
    pub architecture: String,
    pub parameters: u64,
    /// The context the model was trained for, in tokens.
    pub context_length: u64,
    /// The model's own name from its header, if it has one.
    #[serde(default)]
    pub model_name: Option<String>,
}

/// How a local model samples. Fractions are kept in hundredths so the
/// profile stays `Eq` and its stored form exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Sampling {
    /// 0 (greedy) to 200 (2.0).
    pub temperature_percent: u32,
    /// 1 to 100 (1.0: off).
    pub top_p_percent: u32,
    /// Tokens one reply may generate.
    pub max_tokens: u32,
    /// The context the model is loaded with, in tokens: prompt and reply
    /// together. Memory grows with it.
    pub context_tokens: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature_percent: 70,
            top_p_percent: 90,
            max_tokens: 512,
            context_tokens: 4096,
        }
    }
}

impl Sampling {
    /// The settings a newly picked model file starts with: the defaults,
    /// within the context it was trained for, and a reply of at most half
    /// the context so a prompt always has room.
    pub fn for_model(trained_context: u64) -> Sampling {
        let mut sampling = Sampling::default();
        let trained = u32::try_from(trained_context).unwrap_or(u32::MAX);
        if trained >= limits::MIN_LOCAL_CONTEXT {
            sampling.context_tokens = sampling.context_tokens.min(trained);
        }
        sampling.max_tokens = sampling.max_tokens.min(sampling.context_tokens / 2);
        sampling
    }

    /// The settings as the profile form shows them, in the order of
    /// [`Sampling::parse`]: temperature and top-p as decimals ("0.7"),
    /// then max tokens and context size. Written here so the page needs no
    /// decimal formatting of its own (its wasm budget).
    pub fn texts(&self) -> Vec<String> {
        vec![
            hundredths_text(self.temperature_percent),
            hundredths_text(self.top_p_percent),
            self.max_tokens.to_string(),
            self.context_tokens.to_string(),
        ]
    }

    /// Settings from the profile form's four texts (see
    /// [`Sampling::texts`]), each refused with what it must be. The
    /// bounds that depend on the model are [`Sampling::check`]'s.
    pub fn parse(texts: &[String]) -> Result<Sampling, InvalidProfile> {
        let text = |i: usize| texts.get(i).map_or("", |t| t.trim());
        let temperature_percent =
            parse_hundredths(text(0)).ok_or(InvalidProfile::TemperatureText)?;
        let top_p_percent = parse_hundredths(text(1)).ok_or(InvalidProfile::TopPText)?;
        let max_tokens = text(2).parse().map_err(|_| InvalidProfile::MaxTokensText)?;
        let context_tokens = text(3).parse().map_err(|_| InvalidProfile::ContextText)?;
        Ok(Sampling {
            temperature_percent,
            top_p_percent,
            max_tokens,
            context_tokens,
        })
    }

    pub fn check(&self, trained_context: u64) -> Result<(), InvalidProfile> {
        if self.temperature_percent > 200 {
            return Err(InvalidProfile::Temperature);
        }
        if !(1..=100).contains(&self.top_p_percent) {
            return Err(InvalidProfile::TopP);
        }
        let most =
            limits::MAX_LOCAL_CONTEXT.min(trained_context.max(limits::MIN_LOCAL_CONTEXT as u64));
        if !(limits::MIN_LOCAL_CONTEXT as u64..=most).contains(&(self.context_tokens as u64)) {
            return Err(InvalidProfile::Context { most });
        }
        if self.max_tokens == 0 || self.max_tokens >= self.context_tokens {
            return Err(InvalidProfile::MaxTokens);
        }
        Ok(())
    }
}

/// 70 → "0.7", 100 → "1", 5 → "0.05".
fn hundredths_text(n: u32) -> String {
    let text = format!("{}.{:02}", n / 100, n % 100);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// "0.7", ".7", "1", "0.05" → hundredths; `None` for anything else
/// (a sign, an exponent, more than two decimals, more than 1000).
fn parse_hundredths(text: &str) -> Option<u32> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || fraction.len() > 2
        || !digits(whole)
        || !digits(fraction)
        || whole.len() > 4
    {
        return None;
    }
    let whole: u32 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut fraction_value: u32 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    if fraction.len() == 1 {
        fraction_value *= 10;
    }
    Some(whole * 100 + fraction_value)
}

impl Provider {
    pub fn label(&self) -> &'static str {
        match self {
            Provider::BuiltIn => "built-in local agent",
            Provider::OpenAiCompatible { .. } => "OpenAI-compatible",
            Provider::Anthropic { .. } => "Anthropic",
            Provider::Local { .. } => "local model (GGUF)",
        }
    }

    pub fn model(&self) -> Option<&str> {
        match self {
            Provider::BuiltIn => None,
            Provider::OpenAiCompatible { model, .. } | Provider::Anthropic { model, .. } => {
                Some(model)
            }
            Provider::Local { name, .. } => Some(name),
        }
    }

    /// This provider with the sampling settings typed in the profile form
    /// (see [`Sampling::parse`]). No texts, or another provider: unchanged.
    pub fn with_sampling(self, texts: &[String]) -> Result<Provider, InvalidProfile> {
        if texts.is_empty() {
            return Ok(self);
        }
        match self.local_model() {
            Some(model) => Ok(LocalModel {
                sampling: Sampling::parse(texts)?,
                ..model?
            }
            .provider()),
            None => Ok(self),
        }
    }

    /// A local profile's model file and sampling; `None` for other
    /// providers, an error for a spec that does not decode.
    pub fn local_model(&self) -> Option<Result<LocalModel, InvalidProfile>> {
        let Provider::Local { spec, .. } = self else {
            return None;
        };
        Some(LocalModel::from_spec(spec).ok_or(InvalidProfile::LocalSettingsUnreadable))
    }
}

/// A tool a model may call. Every call goes through the command journal.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Encode, Deserialize, Decode,
)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    ReadFile,
    WriteFile,
    ListFiles,
    RunCommand,
}

impl Tool {
    pub const ALL: [Tool; 4] = [
        Tool::ReadFile,
        Tool::WriteFile,
        Tool::ListFiles,
        Tool::RunCommand,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::ReadFile => "read_file",
            Tool::WriteFile => "write_file",
            Tool::ListFiles => "list_files",
            Tool::RunCommand => "run_command",
        }
    }
}

/// What an agent using this profile may do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Capabilities {
    pub tools: FlatSet<Tool>,
    /// Whether the `js` command may evaluate JavaScript in the runtime.
    pub js: bool,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            tools: Tool::ALL.into_iter().collect(),
            js: false,
        }
    }
}

impl Capabilities {
    /// The capability strings a command binding carries.
    pub fn command_capabilities(&self) -> FlatSet<String> {
        let mut caps: FlatSet<String> = ["fs.read", "fs.write"]
            .into_iter()
            .map(String::from)
            .collect();
        if self.js {
            caps.insert("js".into());
        }
        caps
    }
}

/// Limits on one turn of an agent using this profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct AgentBudget {
    /// Provider requests in one turn (each tool round is one).
    pub max_steps: u32,
    /// Commands in one turn.
    pub max_commands: u32,
    /// Input plus output tokens in one turn, as the provider reports them.
    pub max_tokens: u64,
    /// Wall time of one turn.
    pub max_wall_ms: u64,
    /// Attempts at one provider request the provider refused before
    /// processing it (429, 503, 529, no connection); 1 retries nothing.
    /// Profiles stored before retries load with the default, as do all the
    /// fields below.
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    /// The time from a request's first attempt after which no retry starts.
    #[serde(default = "default_max_retry_ms")]
    pub max_retry_ms: u64,
    /// How long a request may wait for its response headers.
    #[serde(default = "default_connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// How long a streaming reply may go without a byte.
    #[serde(default = "default_idle_timeout_ms")]
    pub idle_timeout_ms: u64,
}

fn default_max_attempts() -> u32 {
    4
}
fn default_max_retry_ms() -> u64 {
    2 * 60 * 1000
}
fn default_connect_timeout_ms() -> u64 {
    60 * 1000
}
fn default_idle_timeout_ms() -> u64 {
    60 * 1000
}

impl AgentBudget {
    /// The retry and timeout policy within the bounds a profile may set:
    /// at least one attempt, and no wait so short it fires before any
    /// server could answer or so long it holds a turn for hours.
    pub fn check(&self) -> Result<(), InvalidProfile> {
        let seconds = |ms: u64, max: u64| (1000..=max * 1000).contains(&ms);
        if !(1..=limits::MAX_ATTEMPTS).contains(&self.max_attempts) {
            return Err(InvalidProfile::Attempts);
        }
        if !seconds(self.max_retry_ms, limits::MAX_RETRY_SECONDS) {
            return Err(InvalidProfile::RetryPeriod);
        }
        if !seconds(self.connect_timeout_ms, limits::MAX_TIMEOUT_SECONDS)
            || !seconds(self.idle_timeout_ms, limits::MAX_TIMEOUT_SECONDS)
        {
            return Err(InvalidProfile::Timeouts);
        }
        Ok(())
    }
}

impl Default for AgentBudget {
    fn default() -> Self {
        AgentBudget {
            max_steps: 16,
            max_commands: 32,
            max_tokens: 200_000,
            max_wall_ms: 10 * 60 * 1000,
            max_attempts: default_max_attempts(),
            max_retry_ms: default_max_retry_ms(),
            connect_timeout_ms: default_connect_timeout_ms(),
            idle_timeout_ms: default_idle_timeout_ms(),
        }
    }
}

impl LocalFile {
    fn check(&self) -> Result<(), InvalidProfile> {
        let short = |s: &str| !s.trim().is_empty() && s.len() <= limits::MAX_LOCAL_FACT_BYTES;
        if !short(&self.name) || !short(&self.architecture) {
            return Err(InvalidProfile::LocalFileFacts);
        }
        if self
            .model_name
            .as_deref()
            .is_some_and(|n| n.len() > limits::MAX_LOCAL_FACT_BYTES)
        {
            return Err(InvalidProfile::LocalModelNameTooLong);
        }
        // One plain name inside the model folder: a stored record must not
        // point the shell elsewhere in the private file system.
        let plain = self
            .stored_as
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !short(&self.stored_as) || !plain || self.stored_as.starts_with('.') {
            return Err(InvalidProfile::LocalStoredName);
        }
        if self.size == 0 {
            return Err(InvalidProfile::LocalFileEmpty);
        }
        Ok(())
    }
}

/// An environment variable's value: a literal, or a credential the profile
/// explicitly maps into the runtime's environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum EnvValue {
    Literal(String),
    Secret(CredentialId),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct EnvVar {
    pub name: String,
    pub value: EnvValue,
}

/// One environment profile as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct Profile {
    pub id: ProfileId,
    /// Raised on every edit.
    pub revision: u64,
    pub owner: String,
    pub name: String,
    pub provider: Provider,
    /// The provider's API key, if it needs one.
    pub api_key: Option<CredentialId>,
    pub env: Vec<EnvVar>,
    pub capabilities: Capabilities,
    pub budget: AgentBudget,
}

/// What an execution records about the profile it launched with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct ProfileRef {
    pub id: ProfileId,
    pub revision: u64,
}

/// Why a profile cannot be stored: which setting, and what it must be.
/// The bounds are [`limits`]' (only the context's depends on the model, so
/// it travels); `lifeline-words` words it for the profile form, and its
/// `Display` is the English for logs and the profile store's errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidProfile {
    /// The profile belongs to another executor.
    OtherOwner {
        owner: String,
    },
    /// Blank, or longer than [`limits::MAX_NAME_BYTES`].
    Name,
    BaseUrl,
    /// A remote provider's model name: blank or too long.
    ModelName,
    /// A local model's name: blank or too long.
    LocalName,
    LocalSettingsTooLong,
    LocalSettingsUnreadable,
    /// The model file's name or architecture: blank or too long.
    LocalFileFacts,
    LocalModelNameTooLong,
    /// The stored copy's name is not one plain name.
    LocalStoredName,
    LocalFileEmpty,
    /// The form's texts that are not numbers of the right kind.
    TemperatureText,
    TopPText,
    MaxTokensText,
    ContextText,
    /// Numbers out of their bounds.
    Temperature,
    TopP,
    /// The context must be [`limits::MIN_LOCAL_CONTEXT`] to `most` tokens
    /// for this model.
    Context {
        most: u64,
    },
    MaxTokens,
    Attempts,
    RetryPeriod,
    Timeouts,
    TooManyEnv,
    EnvName {
        name: String,
    },
    EnvReserved {
        name: String,
    },
    EnvTwice {
        name: String,
    },
    EnvValueTooLong {
        name: String,
    },
}

impl core::fmt::Display for InvalidProfile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use limits as L;
        use InvalidProfile as I;
        match self {
            I::OtherOwner { owner } => {
                write!(f, "the profile belongs to {owner:?}, not this browser")
            }
            I::Name => write!(
                f,
                "a profile needs a name of 1 to {} bytes",
                L::MAX_NAME_BYTES
            ),
            I::BaseUrl => f.write_str("the base URL must start with http:// or https://"),
            I::ModelName => f.write_str("the model name is empty or too long"),
            I::LocalName => f.write_str("the model's name is empty or too long"),
            I::LocalSettingsTooLong => f.write_str("the local model's settings are too long"),
            I::LocalSettingsUnreadable => f.write_str("the local model's settings are unreadable"),
            I::LocalFileFacts => {
                f.write_str("the model file's name or architecture is empty or too long")
            }
            I::LocalModelNameTooLong => f.write_str("the model's name is too long"),
            I::LocalStoredName => {
                f.write_str("the stored model file's name must be letters, digits, - _ and .")
            }
            I::LocalFileEmpty => f.write_str("the model file is empty"),
            I::TemperatureText => {
                f.write_str("the temperature must be a number from 0 to 2, such as 0.7")
            }
            I::TopPText => f.write_str("top-p must be a number above 0 and at most 1, such as 0.9"),
            I::MaxTokensText => f.write_str("max tokens must be a whole number of tokens"),
            I::ContextText => f.write_str("the context size must be a whole number of tokens"),
            I::Temperature => f.write_str("the temperature must be 0 to 2"),
            I::TopP => f.write_str("top-p must be above 0 and at most 1"),
            I::Context { most } => write!(
                f,
                "the context size must be {} to {most} tokens for this model",
                L::MIN_LOCAL_CONTEXT
            ),
            I::MaxTokens => f.write_str("max tokens must be at least 1 and below the context size"),
            I::Attempts => write!(f, "attempts per request must be 1 to {}", L::MAX_ATTEMPTS),
            I::RetryPeriod => write!(
                f,
                "the retry period must be 1 to {} seconds",
                L::MAX_RETRY_SECONDS
            ),
            I::Timeouts => write!(
                f,
                "timeouts must be 1 to {} seconds",
                L::MAX_TIMEOUT_SECONDS
            ),
            I::TooManyEnv => write!(
                f,
                "a profile has at most {} environment variables",
                L::MAX_ENV_VARS
            ),
            I::EnvName { name } => write!(
                f,
                "environment variable name {name:?} must be letters, digits and _"
            ),
            I::EnvReserved { name } => {
                write!(f, "{name} is set by the runtime and cannot be overridden")
            }
            I::EnvTwice { name } => write!(f, "environment variable {name} is defined twice"),
            I::EnvValueTooLong { name } => write!(f, "the value of {name} is too long"),
        }
    }
}

/// Names the runtime sets itself; a profile cannot override them.
pub const RESERVED_ENV: [&str; 3] = ["PWD", "LIFELINE_SESSION", "LIFELINE_EXECUTION"];

impl Profile {
    /// Checked before writing and after reading (a record from storage is
    /// outside input like any other).
    pub fn validate(&self) -> Result<(), InvalidProfile> {
        use InvalidProfile as I;
        if self.owner != OWNER {
            return Err(I::OtherOwner {
                owner: self.owner.clone(),
            });
        }
        if self.name.trim().is_empty() || self.name.len() > limits::MAX_NAME_BYTES {
            return Err(I::Name);
        }
        match &self.provider {
            Provider::BuiltIn => {}
            Provider::OpenAiCompatible { base_url, model }
            | Provider::Anthropic { base_url, model } => {
                if !(base_url.starts_with("http://") || base_url.starts_with("https://"))
                    || base_url.len() > limits::MAX_URL_BYTES
                {
                    return Err(I::BaseUrl);
                }
                if model.trim().is_empty() || model.len() > limits::MAX_MODEL_BYTES {
                    return Err(I::ModelName);
                }
            }
            Provider::Local { name, spec } => {
                if name.trim().is_empty() || name.len() > limits::MAX_LOCAL_FACT_BYTES {
                    return Err(I::LocalName);
                }
                if spec.len() > limits::MAX_LOCAL_SPEC_BYTES {
                    return Err(I::LocalSettingsTooLong);
                }
                let LocalModel { file, sampling } =
                    LocalModel::from_spec(spec).ok_or(I::LocalSettingsUnreadable)?;
                file.check()?;
                sampling.check(file.context_length)?;
            }
        }
        self.budget.check()?;
        if self.env.len() > limits::MAX_ENV_VARS {
            return Err(I::TooManyEnv);
        }
        let mut names = FlatSet::new();
        for var in &self.env {
            let n = &var.name;
            let valid = !n.is_empty()
                && n.len() <= limits::MAX_ENV_NAME_BYTES
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !n.as_bytes()[0].is_ascii_digit();
            let name = || n.clone();
            if !valid {
                return Err(I::EnvName { name: name() });
            }
            if RESERVED_ENV.contains(&n.as_str()) {
                return Err(I::EnvReserved { name: name() });
            }
            if !names.insert(n.as_str()) {
                return Err(I::EnvTwice { name: name() });
            }
            if let EnvValue::Literal(v) = &var.value {
                if v.len() > limits::MAX_ENV_VALUE_BYTES {
                    return Err(I::EnvValueTooLong { name: name() });
                }
            }
        }
        Ok(())
    }

    /// Every credential this profile refers to: the API key first, then the
    /// secrets it maps into the environment.
    pub fn credential_refs(&self) -> Vec<CredentialId> {
        let mut refs: Vec<CredentialId> = self.api_key.into_iter().collect();
        for var in &self.env {
            if let EnvValue::Secret(id) = var.value {
                if !refs.contains(&id) {
                    refs.push(id);
                }
            }
        }
        refs
    }

    pub fn reference(&self) -> ProfileRef {
        ProfileRef {
            id: self.id,
            revision: self.revision,
        }
    }

    /// The profile a new browser starts with.
    pub fn built_in(id: ProfileId) -> Profile {
        Profile {
            id,
            revision: 1,
            owner: OWNER.into(),
            name: "Built-in local agent".into(),
            provider: Provider::BuiltIn,
            api_key: None,
            env: Vec::new(),
            capabilities: Capabilities::default(),
            budget: AgentBudget::default(),
        }
    }
}

/// The answer to looking a profile up by identity.
// One value per launch, never stored in bulk: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileLookup {
    Found(Profile),
    /// The store answered and has no such profile: it was deleted.
    Deleted,
    /// The store could not answer, or the record does not decode (a
    /// `Corrupt` fault, with the decoder's reason).
    Failed {
        fault: StoreFault,
    },
}

/// Why a profile lookup blocks a resume (criterion 7). Recorded as the
/// session's failure cause; the typed reasons are stored in the compact
/// wire form (`crate::wire`), which costs no derived decoder per variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub enum ProfileBlock {
    /// Recorded before the reasons were typed: the store's English.
    Unreadable {
        detail: String,
    },
    OtherOwner {
        owner: String,
    },
    /// The profile store could not answer, or the record does not decode.
    Store {
        #[serde(with = "crate::wire::as_arg")]
        fault: StoreFault,
    },
    /// The stored profile fails validation.
    Invalid {
        #[serde(with = "crate::wire::as_arg")]
        invalid: InvalidProfile,
    },
}

impl core::fmt::Display for ProfileBlock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ProfileBlock::Unreadable { detail } => write!(
                f,
                "the profile recorded for this session could not be read ({detail}); open Profiles to repair or delete it, then resume"
            ),
            ProfileBlock::OtherOwner { owner } => write!(
                f,
                "the profile recorded for this session belongs to {owner:?}; it is not used here. Delete it in Profiles to resume without it"
            ),
            ProfileBlock::Store { fault } => write!(
                f,
                "the profile recorded for this session could not be read ({fault}); open Profiles to repair or delete it, then resume"
            ),
            ProfileBlock::Invalid { invalid } => write!(
                f,
                "the profile recorded for this session could not be read ({invalid}); open Profiles to repair or delete it, then resume"
            ),
        }
    }
}

/// What a resume launches with, before secrets are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchProfile {
    /// The identity the resumed execution records; `None` when the recorded
    /// profile was deleted.
    pub profile: Option<ProfileRef>,
    pub provider: Provider,
    /// The provider key to resolve at the launch checkpoint.
    pub api_key: Option<CredentialId>,
    pub env: Vec<EnvVar>,
    pub capabilities: Capabilities,
    pub budget: AgentBudget,
    /// Set when recovery goes on without the recorded profile.
    pub note: Option<String>,
}

/// Criteria 6 and 7: a resume uses the *current* definition of the profile
/// recorded for the execution it resumes (not the session's selection now);
/// a deleted profile permits recovery without its environment; any other
/// lookup failure, or another owner's profile, blocks.
pub fn resolve_for_resume(
    recorded: Option<&ProfileRef>,
    lookup: ProfileLookup,
) -> Result<LaunchProfile, ProfileBlock> {
    let without = |note: Option<String>| LaunchProfile {
        profile: None,
        provider: Provider::BuiltIn,
        api_key: None,
        env: Vec::new(),
        capabilities: Capabilities::default(),
        budget: AgentBudget::default(),
        note,
    };
    if recorded.is_none() {
        return Ok(without(None));
    }
    match lookup {
        ProfileLookup::Found(p) if p.owner != OWNER => Err(ProfileBlock::OtherOwner { owner: p.owner }),
        ProfileLookup::Found(p) => match p.validate() {
            Ok(()) => Ok(LaunchProfile {
                profile: Some(p.reference()),
                provider: p.provider,
                api_key: p.api_key,
                env: p.env,
                capabilities: p.capabilities,
                budget: p.budget,
                note: None,
            }),
            Err(invalid) => Err(ProfileBlock::Invalid { invalid }),
        },
        ProfileLookup::Deleted => Ok(without(Some(
            "the profile this session ran with was deleted; it resumes without that profile's environment variables".into(),
        ))),
        ProfileLookup::Failed { fault } => Err(ProfileBlock::Store { fault }),
    }
}

/// A secret's value. Its `Debug` never shows it, so a stray `{:?}` cannot
/// put it in a log or an error.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Why a credential could not be resolved at the launch checkpoint.
/// Recorded as the session's failure cause; the page words each reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub enum CredentialFailure {
    Missing,
    /// Recorded before the reasons were typed: the store's English.
    Unreadable {
        detail: String,
    },
    /// The store could not be read.
    Store {
        #[serde(with = "crate::wire::as_arg")]
        fault: StoreFault,
    },
    /// The stored record is malformed; `reason` names the field that is
    /// wrong (never what it holds).
    Malformed {
        reason: String,
    },
    /// The wrapping key is gone.
    KeyGone,
    /// The wrapping key's record is damaged.
    KeyDamaged,
    /// WebCrypto is missing or refused (the exception's name).
    NoCrypto {
        detail: String,
    },
    /// The ciphertext does not authenticate under the key: encrypted under
    /// an earlier key, or altered.
    Undecryptable,
    /// The decrypted bytes are not text.
    NotText,
}

impl core::fmt::Display for CredentialFailure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use CredentialFailure as C;
        match self {
            C::Missing => f.write_str("it is missing"),
            C::Unreadable { detail } => f.write_str(detail),
            C::Store { fault } => fault.fmt(f),
            C::Malformed { reason } => write!(f, "the stored credential record is malformed ({reason})"),
            C::KeyGone => f.write_str("the encryption key is gone"),
            C::KeyDamaged => f.write_str("the encryption key record is damaged"),
            C::NoCrypto { detail } => write!(
                f,
                "the browser's WebCrypto is not available ({detail}); the credential cannot be decrypted here"
            ),
            C::Undecryptable => f.write_str(
                "the stored credential could not be decrypted: it was encrypted under an earlier key, or the record was altered",
            ),
            C::NotText => f.write_str("the decrypted credential is not text"),
        }
    }
}

/// The environment a runtime starts with: runtime-set names first, then the
/// profile's literals and mapped secrets. Profile names cannot shadow the
/// reserved ones ([`Profile::validate`]), so the order is the precedence.
pub fn launch_environment(
    reserved: &[(&str, String)],
    env: &[EnvVar],
    secrets: &[(CredentialId, Secret)],
) -> Result<Vec<(String, Secret)>, CredentialId> {
    let mut out: Vec<(String, Secret)> = reserved
        .iter()
        .map(|(k, v)| (k.to_string(), Secret::new(v.clone())))
        .collect();
    for var in env {
        if RESERVED_ENV.contains(&var.name.as_str()) {
            continue;
        }
        let value = match &var.value {
            EnvValue::Literal(v) => Secret::new(v.clone()),
            EnvValue::Secret(id) => secrets
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, s)| s.clone())
                .ok_or(*id)?,
        };
        out.push((var.name.clone(), value));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "local_spec_tests.rs"]
mod local_spec_tests;

/// Why a file picked for a local model profile cannot be one, as a person
/// is told it (the header reader's own words go to the worker's log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelFileFault {
    /// It does not start with the GGUF magic.
    NotGguf,
    /// A GGUF version this build does not read.
    Version { version: u32 },
    /// The file ends inside its header.
    Truncated,
    /// The header contradicts itself.
    Damaged,
    /// The header names no model architecture.
    NoArchitecture,
    /// The browser could not read or keep the file (the exception's name).
    Unreadable { detail: String },
}
