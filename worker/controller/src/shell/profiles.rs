//! Profiles and their keys in the profile store: listing, saving and
//! deleting them for the page. A key is stored under a fresh credential id
//! before the profile that names it, so a failed write leaves the old
//! profile whole; nothing here decides how a session starts (the engine's
//! session layer reads profiles through `Effect::LookupProfile`).

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use lifeline_core::phrase::Phrase;
use lifeline_core::profile::{
    AgentBudget, EnvValue, EnvVar, Profile, ProfileLookup, Secret, OWNER,
};
use lifeline_core::{CredentialId, ProfileId};
use lifeline_protocol::{ControllerToPage, KeyInput, Level, ProfileInput, ProfileSummary};
use wasm_bindgen_futures::spawn_local;
use wasm_split_helpers::SplitLoaderError;

use super::{notice, post, Shell};
use crate::config::ConfigStore;
use crate::web::random_u128;

/// A fresh identity from the browser's randomness.
pub(super) fn mint<T>(make: fn(u128) -> Result<T, lifeline_core::IdError>) -> Option<T> {
    random_u128().ok().and_then(|raw| make(raw).ok())
}

impl Shell {
    pub(super) async fn publish_profiles(&self) {
        let Some(config) = self.config() else { return };
        let listed = match config.list_profiles().await {
            Ok(l) => l,
            Err(e) => {
                notice(
                    "profiles",
                    Level::Error,
                    Phrase::ProfilesUnreadable { fault: e.fault() },
                );
                return;
            }
        };
        let mut profiles = Vec::new();
        let mut errors = Vec::new();
        for p in listed {
            match p {
                Ok(p) => profiles.push(summary(&p)),
                Err(e) => errors.push(e),
            }
        }
        post(ControllerToPage::Profiles { profiles, errors });
    }

    pub fn save_profile(self: &Rc<Self>, input: ProfileInput) {
        let Some(config) = self.config() else {
            return notice("profiles", Level::Error, Phrase::ProfilesNotOpen);
        };
        let shell = self.clone();
        spawn_local(async move {
            let saved = match saving(config, input).await {
                Ok(save) => save.await,
                Err(_) => Err(Phrase::NotLoaded),
            };
            match saved {
                Ok(name) => notice("profiles", Level::Info, Phrase::ProfileSaved { name }),
                Err(e) => notice("profiles", Level::Error, e),
            }
            shell.publish_profiles().await;
        });
    }

    pub fn delete_profile(self: &Rc<Self>, id: ProfileId) {
        let Some(config) = self.config() else { return };
        let shell = self.clone();
        spawn_local(async move {
            // The profile's own keys go with it; nothing else refers to them.
            if let ProfileLookup::Found(p) = config.lookup_profile(id).await {
                for c in p.credential_refs() {
                    let _ = config.delete_credential(c).await;
                }
            }
            if let Err(e) = config.delete_profile(id).await {
                notice(
                    "profiles",
                    Level::Error,
                    Phrase::ProfileNotDeleted { fault: e.fault() },
                );
            }
            shell.publish_profiles().await;
        });
    }
}

fn summary(p: &Profile) -> ProfileSummary {
    let key_env = p.env.iter().find_map(|v| match v.value {
        EnvValue::Secret(id) if Some(id) == p.api_key => Some(v.name.clone()),
        _ => None,
    });
    ProfileSummary {
        id: p.id,
        revision: p.revision,
        name: p.name.clone(),
        provider: p.provider.clone(),
        local_facts: lifeline_core::phrase::Phrase::local_facts(&p.provider),
        sampling: match p.provider.local_model() {
            Some(Ok(m)) => m.sampling.texts(),
            _ => Vec::new(),
        },
        has_key: p.api_key.is_some(),
        env: p
            .env
            .iter()
            .filter_map(|v| match &v.value {
                EnvValue::Literal(s) => Some((v.name.clone(), s.clone())),
                EnvValue::Secret(_) => None,
            })
            .collect(),
        key_env,
        capabilities: p.capabilities.clone(),
        budget: p.budget,
    }
}

/// A profile's save, in a module of its own that `cargo xtask build`
/// splits off: most visits save none. The module is fetched the first
/// time; if it cannot be, nothing was stored.
#[wasm_split_helpers::wasm_split(profile_save, fallible)]
fn saving(
    config: Rc<ConfigStore>,
    input: ProfileInput,
) -> Result<Pin<Box<dyn Future<Output = Result<String, Phrase>>>>, SplitLoaderError> {
    Ok(Box::pin(async move { save(&config, input).await }))
}

/// Creates or edits a profile. The key is stored first under a fresh
/// credential id, so a failed profile write leaves the old profile whole.
async fn save(config: &ConfigStore, input: ProfileInput) -> Result<String, Phrase> {
    let existing = match input.id {
        Some(id) => match config.lookup_profile(id).await {
            ProfileLookup::Found(p) => Some(p),
            ProfileLookup::Deleted => return Err(Phrase::ProfileDeletedMeanwhile),
            // An unreadable record may be repaired by saving over it.
            ProfileLookup::Failed { .. } => None,
        },
        None => None,
    };
    let id = match input.id.or_else(|| mint(ProfileId::from_u128)) {
        Some(id) => id,
        None => return Err(Phrase::NoIdMade),
    };
    // Before any key is stored: a refused setting leaves nothing behind.
    let provider = input
        .provider
        .with_sampling(&input.sampling)
        .map_err(|invalid| Phrase::ProfileInvalid { invalid })?;
    let old_key = existing.as_ref().and_then(|p| p.api_key);
    let (api_key, new_key) = match input.api_key {
        KeyInput::Keep => (old_key, None),
        KeyInput::Clear => (None, None),
        KeyInput::Set(secret) => {
            let Some(cid) = mint(CredentialId::from_u128) else {
                return Err(Phrase::NoIdMade);
            };
            let label = format!("{} key", input.name.trim());
            config
                .put_credential(cid, &label, &Secret::new(secret.0))
                .await
                .map_err(|e| Phrase::KeyNotStored { fault: e.fault() })?;
            (Some(cid), Some(cid))
        }
    };
    let mut env: Vec<EnvVar> = input
        .env
        .into_iter()
        .map(|(name, value)| EnvVar {
            name,
            value: EnvValue::Literal(value),
        })
        .collect();
    if let Some(name) = input.key_env.filter(|n| !n.trim().is_empty()) {
        let Some(key) = api_key else {
            return Err(Phrase::NoKeyForCommands);
        };
        env.push(EnvVar {
            name: name.trim().to_string(),
            value: EnvValue::Secret(key),
        });
    }
    let profile = Profile {
        id,
        revision: existing.as_ref().map_or(1, |p| p.revision + 1),
        owner: OWNER.into(),
        name: input.name.trim().to_string(),
        provider,
        api_key,
        env,
        capabilities: input.capabilities,
        budget: AgentBudget {
            max_steps: input.budget.max_steps.max(1),
            max_commands: input.budget.max_commands,
            max_tokens: input.budget.max_tokens.max(1),
            max_wall_ms: input.budget.max_wall_ms.max(1000),
            ..input.budget
        },
    };
    let saved = match profile.validate() {
        Err(invalid) => Err(Phrase::ProfileInvalid { invalid }),
        Ok(()) => config
            .put_profile(&profile)
            .await
            .map_err(|e| Phrase::ProfileNotSaved { fault: e.fault() }),
    };
    // The key no profile refers to now: the new one if the profile was not
    // saved, else the one it replaced. (One deletion, awaited in one place:
    // each `.await` of the store's future compiles its own copy of it.)
    let unreferenced = match &saved {
        Err(_) => new_key,
        Ok(()) => old_key.filter(|_| old_key != api_key),
    };
    if let Some(k) = unreferenced {
        let _ = config.delete_credential(k).await;
    }
    saved.map(|()| profile.name)
}
