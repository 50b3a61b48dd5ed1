//! Environment profiles: provider, model, variables, capabilities, budget.
//!
//! A profile is checked with [`Profile::validate`] before it is written and
//! again after it is read: a stored record is outside input like any other.
//! [`ConfigStore::put_profile`] refuses a revision that is not above the
//! stored one ([`ConfigError::StaleRevision`]): two editors of one profile
//! never silently lose an update. A stored record whose revision cannot be
//! read at all may be overwritten (that is how the user repairs it).
//!
//! [`ConfigStore::lookup_profile`] answers what the resume rules of
//! [`lifeline_core::profile::resolve_for_resume`] need: `Deleted` only when
//! the store answered and holds no such record; `Failed` when it could not
//! answer or the record does not decode or validate. A record of another
//! owner (imported, or written by another executor) that is otherwise valid
//! comes back as `Found`, so the core blocks on it by owner rather than
//! treating it as unreadable. [`ConfigStore::list_profiles`] follows the same
//! rules and lists every unreadable record as `Err(detail)`.

use js_sys::Array;
use lifeline_core::profile::{Profile, ProfileLookup, OWNER};
use lifeline_core::store_fault::{StoreFault, StoredKind};
use lifeline_core::ProfileId;
use wasm_bindgen::{JsCast, JsValue};

use super::{
    existing_or_room, field, limits, object, printable, record_version_ok, store, ConfigError,
    ConfigStore, Step, MAX_SAFE_INTEGER, RECORD_VERSION,
};
use crate::idb;

impl ConfigStore {
    /// Stores `profile` after validating it. Its revision must be above the
    /// stored one's ([`ConfigError::StaleRevision`]); a new profile is refused
    /// beyond [`limits::MAX_PROFILES`].
    pub async fn put_profile(&self, profile: &Profile) -> Result<(), ConfigError> {
        self.usable()?;
        profile
            .validate()
            .map_err(|e| ConfigError::InvalidProfile(e.to_string()))?;
        if profile.revision > MAX_SAFE_INTEGER {
            return Err(ConfigError::InvalidProfile(format!(
                "revision {} is above what this store keeps exactly",
                profile.revision
            )));
        }
        let json = lifeline_encode::to_string(profile);
        if json.len() > limits::MAX_PROFILE_JSON_BYTES {
            return Err(ConfigError::InvalidProfile(format!(
                "the profile is {} bytes, above the {} a profile may have",
                json.len(),
                limits::MAX_PROFILE_JSON_BYTES
            )));
        }
        let id = JsValue::from_str(&profile.id.to_string());
        let value = object(&[
            ("v", JsValue::from(RECORD_VERSION)),
            ("id", id.clone()),
            ("json", JsValue::from_str(&json)),
        ]);
        let (profile_id, offered) = (profile.id, profile.revision);
        self.write("save profile", store::PROFILES, |s| async move {
            let existing =
                existing_or_room(&s, &id, StoredKind::Profiles, limits::MAX_PROFILES).await?;
            if let Some(stored) = stored_revision(&existing) {
                if offered <= stored {
                    return Err(Step::Refuse(ConfigError::StaleRevision {
                        id: profile_id,
                        stored,
                        offered,
                    }));
                }
            }
            s.put(&value).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// Looks a profile up by identity, for a resume (see the module docs).
    pub async fn lookup_profile(&self, id: ProfileId) -> ProfileLookup {
        let key = JsValue::from_str(&id.to_string());
        match self
            .read_one("read profile", store::PROFILES, |s| s.get(&key))
            .await
        {
            Err(e) => ProfileLookup::Failed { fault: e.fault() },
            Ok(value) if value.is_undefined() => ProfileLookup::Deleted,
            Ok(value) => match read_profile(&value) {
                Ok(profile) if profile.id == id => ProfileLookup::Found(profile),
                Ok(profile) => ProfileLookup::Failed {
                    fault: StoreFault::Corrupt {
                        detail: format!(
                            "the record stored as profile {id} is profile {}",
                            profile.id
                        ),
                    },
                },
                Err(detail) => ProfileLookup::Failed {
                    fault: StoreFault::Corrupt { detail },
                },
            },
        }
    }

    /// Every stored profile, in id order. A record that cannot be read is
    /// listed as `Err(detail)` (naming its key), never left out.
    pub async fn list_profiles(&self) -> Result<Vec<Result<Profile, String>>, ConfigError> {
        let values = self
            .read_one("list profiles", store::PROFILES, |s| s.get_all())
            .await?;
        let values: Array = values.unchecked_into();
        let mut out = Vec::with_capacity(values.length() as usize);
        for value in values.iter() {
            let key = printable(&field(&value, "id"));
            out.push(
                read_profile(&value).map_err(|reason| format!("profile record {key}: {reason}")),
            );
        }
        Ok(out)
    }

    /// Deletes a profile; deleting one that is not there is not an error.
    pub async fn delete_profile(&self, id: ProfileId) -> Result<(), ConfigError> {
        self.delete("delete profile", store::PROFILES, id.to_string())
            .await
    }

    /// The profile a session starts with when the user picked none.
    ///
    /// The rule: if the store holds no profile record at all, stores
    /// `Profile::built_in(new_id)` and returns it. Otherwise returns, in id
    /// order, the first readable profile of this browser's owner whose
    /// provider is the built-in agent, else the first readable profile of
    /// this owner of any provider. If no record is readable and ours (all
    /// unreadable or of another owner), a new built-in profile is stored
    /// beside them — they stay where they are for the user to repair or
    /// delete — so a new user always gets a working agent.
    pub async fn ensure_default_profile(&self, new_id: ProfileId) -> Result<Profile, ConfigError> {
        self.usable()?;
        let built_in = Profile::built_in(new_id);
        let json = lifeline_encode::to_string(&built_in);
        let value = object(&[
            ("v", JsValue::from(RECORD_VERSION)),
            ("id", JsValue::from_str(&new_id.to_string())),
            ("json", JsValue::from_str(&json)),
        ]);
        self.write(
            "create the default profile",
            store::PROFILES,
            |s| async move {
                let all = s.get_all().map_err(Step::Js)?;
                let all: Array = idb::request(&all).await.map_err(Step::Js)?.unchecked_into();
                let readable: Vec<Profile> = all
                    .iter()
                    .filter_map(|v| read_profile(&v).ok())
                    .filter(|p| p.owner == OWNER && p.validate().is_ok())
                    .collect();
                let chosen = readable
                    .iter()
                    .find(|p| p.provider == lifeline_core::profile::Provider::BuiltIn)
                    .or_else(|| readable.first());
                if let Some(p) = chosen {
                    return Ok(p.clone());
                }
                if all.length() as usize >= limits::MAX_PROFILES {
                    return Err(Step::Refuse(ConfigError::TooMany {
                        what: StoredKind::Profiles,
                        max: limits::MAX_PROFILES,
                    }));
                }
                // `add`: an id already taken (by an unreadable record) fails
                // instead of overwriting it.
                s.add(&value).map_err(Step::Js)?;
                Ok(built_in)
            },
        )
        .await
    }
}

/// Decodes and checks a stored profile value. Another owner's profile that
/// is otherwise valid is returned as it is (the caller decides to block on
/// it); reasons never quote the record's contents.
fn read_profile(value: &JsValue) -> Result<Profile, String> {
    if !value.is_object() {
        return Err("it is not a profile record".into());
    }
    record_version_ok(value)?;
    let Some(json) = field(value, "json").as_string() else {
        return Err("it has no json field".into());
    };
    if json.len() > limits::MAX_PROFILE_JSON_BYTES {
        return Err(format!(
            "it is {} bytes; the limit is {}",
            json.len(),
            limits::MAX_PROFILE_JSON_BYTES
        ));
    }
    // The decoder's messages can quote values (a key is a value); say only
    // that it failed.
    let profile: Profile = lifeline_codec::decode_value(&json)
        .map_err(|_| "its JSON does not decode as a profile".to_string())?;
    if field(value, "id").as_string() != Some(profile.id.to_string()) {
        return Err(format!(
            "it is stored under a key that is not its id {}",
            profile.id
        ));
    }
    let check = if profile.owner == OWNER {
        profile.validate()
    } else {
        Profile {
            owner: OWNER.into(),
            ..profile.clone()
        }
        .validate()
    };
    check.map_err(|e| format!("it fails validation: {e}"))?;
    Ok(profile)
}

/// The revision of a stored profile value, when that much is readable.
fn stored_revision(value: &JsValue) -> Option<u64> {
    let json = field(value, "json").as_string()?;
    if json.len() > limits::MAX_PROFILE_JSON_BYTES {
        return None;
    }
    lifeline_codec::whole_field(&json, "revision")
}
