//! The credential vault: provider API keys, encrypted at rest.
//!
//! A secret is encrypted with AES-GCM (256-bit key) under a fresh random
//! 12-byte IV on every write, with the credential id's ULID text as
//! additional authenticated data: a ciphertext copied into another record
//! fails to decrypt. The key is generated once by WebCrypto as
//! *non-extractable* and stored as the `CryptoKey` object itself (structured
//! clone keeps it non-extractable): no script, this one included, can read
//! its bytes, so the ciphertexts at rest are useless without this origin's
//! IndexedDB.
//!
//! [`ConfigStore::resolve_credential`] is the launch checkpoint and the only
//! function that decrypts. Nothing else returns or logs a secret: listings
//! give ids and labels, and no error's `Display` or `Debug` quotes a secret,
//! a label or a record's contents.
//!
//! **A lost key is never replaced for reading.** If the `keys` record is gone
//! (part of the site's storage was cleared) while credentials remain, they
//! resolve as `KeyGone`. Only writing a credential generates a new key;
//! credentials encrypted under the old one then stay `Undecryptable` (they
//! fail authentication under the new key) until the user enters them
//! again.

use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use lifeline_core::profile::{CredentialFailure, Secret};
use lifeline_core::store_fault::StoredKind;
use lifeline_core::CredentialId;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AesGcmParams, AesKeyGenParams, Crypto, CryptoKey, SubtleCrypto};

use super::{
    existing_or_room, field, limits, object, record_version_ok, store, ConfigError, ConfigStore,
    Step, RECORD_VERSION,
};
use crate::idb::{self, exception_name};

/// The `keys` record that holds the credentials' wrapping key.
pub const CREDENTIAL_KEY_NAME: &str = "credentials";

impl ConfigStore {
    /// Encrypts `secret` and stores it as credential `id` with `label`,
    /// replacing an earlier secret of the same id (its `created_ms` is kept).
    /// Generates the wrapping key if there is none (see the module docs).
    pub async fn put_credential(
        &self,
        id: CredentialId,
        label: &str,
        secret: &Secret,
    ) -> Result<(), ConfigError> {
        self.usable()?;
        if label.trim().is_empty() || label.len() > limits::MAX_LABEL_BYTES {
            return Err(ConfigError::InvalidLabel { len: label.len() });
        }
        let plain = secret.expose().as_bytes();
        if plain.is_empty() || plain.len() > limits::MAX_SECRET_BYTES {
            return Err(ConfigError::InvalidSecret { len: plain.len() });
        }
        let crypto = crypto().map_err(ConfigError::Crypto)?;
        let key = self.key_for_write(&crypto).await?;
        let mut iv = [0u8; limits::IV_BYTES as usize];
        crypto
            .get_random_values_with_u8_array(&mut iv)
            .map_err(|e| ConfigError::Crypto(format!("getRandomValues: {}", exception_name(&e))))?;
        let id_text = id.to_string();
        let iv = Uint8Array::from(&iv[..]);
        let params = gcm_params(&iv, &id_text);
        let ciphertext = crypto
            .subtle()
            .encrypt_with_object_and_u8_array(&params, &key, plain)
            .map(JsFuture::from)
            .map_err(|e| ConfigError::Crypto(format!("encrypt: {}", exception_name(&e))))?
            .await
            .map_err(|e| ConfigError::Crypto(format!("encrypt: {}", exception_name(&e))))?;
        if !ciphertext.is_instance_of::<ArrayBuffer>() {
            return Err(ConfigError::Crypto(
                "encrypt returned no ArrayBuffer".into(),
            ));
        }
        let id_js = JsValue::from_str(&id_text);
        let label = label.to_string();
        self.write("save credential", store::CREDENTIALS, |s| async move {
            let existing =
                existing_or_room(&s, &id_js, StoredKind::Credentials, limits::MAX_CREDENTIALS)
                    .await?;
            let now = js_sys::Date::now();
            let created = if existing.is_undefined() {
                now
            } else {
                field(&existing, "created_ms")
                    .as_f64()
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .unwrap_or(now)
            };
            let value = object(&[
                ("v", JsValue::from(RECORD_VERSION)),
                ("id", id_js.clone()),
                ("label", JsValue::from_str(&label)),
                ("created_ms", JsValue::from_f64(created)),
                ("iv", iv.into()),
                ("ciphertext", ciphertext),
            ]);
            s.put(&value).map_err(Step::Js)?;
            Ok(())
        })
        .await
    }

    /// The label of credential `id`, or `None` when there is no such record.
    pub async fn credential_label(&self, id: CredentialId) -> Result<Option<String>, ConfigError> {
        let key = JsValue::from_str(&id.to_string());
        let value = self
            .read_one("read credential", store::CREDENTIALS, |s| s.get(&key))
            .await?;
        if value.is_undefined() {
            return Ok(None);
        }
        read_label(&value)
            .map(Some)
            .ok_or_else(|| ConfigError::Corrupt(format!("credential {id} has no readable label")))
    }

    /// Every credential's id and label, in id order; no secret, no
    /// ciphertext. A record with an unreadable label is listed with the
    /// label `(unreadable label)`; a record whose key is not a credential id
    /// cannot be referred to by any profile and is not listed.
    pub async fn list_credentials(&self) -> Result<Vec<(CredentialId, String)>, ConfigError> {
        let values = self
            .read_one("list credentials", store::CREDENTIALS, |s| s.get_all())
            .await?;
        let values: Array = values.unchecked_into();
        let mut out = Vec::with_capacity(values.length() as usize);
        for value in values.iter() {
            let Some(id) = field(&value, "id")
                .as_string()
                .and_then(|t| t.parse::<CredentialId>().ok())
            else {
                continue;
            };
            let label = read_label(&value).unwrap_or_else(|| "(unreadable label)".into());
            out.push((id, label));
        }
        Ok(out)
    }

    /// Deletes a credential; deleting one that is not there is not an error.
    /// The wrapping key stays.
    pub async fn delete_credential(&self, id: CredentialId) -> Result<(), ConfigError> {
        self.delete("delete credential", store::CREDENTIALS, id.to_string())
            .await
    }

    /// The launch checkpoint: the only function that decrypts.
    ///
    /// `Missing` when there is no such credential record; otherwise the
    /// typed reason it cannot be read: the store, a malformed record, the
    /// wrapping key gone or damaged, no WebCrypto, a ciphertext that does
    /// not authenticate, bytes that are not text. Never generates a key.
    pub async fn resolve_credential(&self, id: CredentialId) -> Result<Secret, CredentialFailure> {
        use CredentialFailure as C;
        let id_text = id.to_string();
        let (record, key) = self
            .read_credential_and_key(&id_text)
            .await
            .map_err(|e| C::Store { fault: e.fault() })?;
        if record.is_undefined() {
            return Err(C::Missing);
        }
        let (iv, ciphertext) =
            read_sealed(&record, &id_text).map_err(|reason| C::Malformed { reason })?;
        if key.is_undefined() {
            return Err(C::KeyGone);
        }
        let key = usable_key(&key).ok_or(C::KeyDamaged)?;
        let crypto = crypto().map_err(|detail| C::NoCrypto { detail })?;
        let params = gcm_params(&iv, &id_text);
        let plain =
            match crypto
                .subtle()
                .decrypt_with_object_and_buffer_source(&params, &key, &ciphertext)
            {
                Ok(p) => JsFuture::from(p).await,
                Err(e) => Err(e),
            }
            .map_err(|_| C::Undecryptable)?;
        let plain = plain
            .dyn_into::<ArrayBuffer>()
            .map_err(|_| C::Undecryptable)?;
        String::from_utf8(Uint8Array::new(&plain).to_vec())
            .map(Secret::new)
            .map_err(|_| C::NotText)
    }

    /// The credential record and the wrapping key, read in one transaction.
    async fn read_credential_and_key(
        &self,
        id_text: &str,
    ) -> Result<(JsValue, JsValue), ConfigError> {
        let what = "read credential";
        let transaction = self.readonly(&[store::CREDENTIALS, store::KEYS])?;
        let record = transaction
            .object_store(store::CREDENTIALS)
            .and_then(|s| s.get(&JsValue::from_str(id_text)))
            .map_err(|e| self.failure(what, &e))?;
        let key = transaction
            .object_store(store::KEYS)
            .and_then(|s| s.get(&JsValue::from_str(CREDENTIAL_KEY_NAME)))
            .map_err(|e| self.failure(what, &e))?;
        let record = idb::request(&record)
            .await
            .map_err(|e| self.failure(what, &e))?;
        let key = idb::request(&key)
            .await
            .map_err(|e| self.failure(what, &e))?;
        let key = if key.is_undefined() {
            key
        } else {
            field(&key, "key")
        };
        Ok((record, key))
    }

    /// The wrapping key, generated and stored if there is none usable.
    async fn key_for_write(&self, crypto: &Crypto) -> Result<CryptoKey, ConfigError> {
        let name = JsValue::from_str(CREDENTIAL_KEY_NAME);
        let stored = self
            .read_one("read the encryption key", store::KEYS, |s| s.get(&name))
            .await?;
        if let Some(key) = (!stored.is_undefined())
            .then(|| usable_key(&field(&stored, "key")))
            .flatten()
        {
            return Ok(key);
        }
        let params = AesKeyGenParams::new("AES-GCM", 256);
        let usages = Array::of2(&"encrypt".into(), &"decrypt".into());
        let generated: CryptoKey = crypto
            .subtle()
            .generate_key_with_object(&params, false, &usages)
            .map(JsFuture::from)
            .map_err(|e| ConfigError::Crypto(format!("generateKey: {}", exception_name(&e))))?
            .await
            .map_err(|e| ConfigError::Crypto(format!("generateKey: {}", exception_name(&e))))?
            .dyn_into()
            .map_err(|_| ConfigError::Crypto("generateKey returned no CryptoKey".into()))?;
        let value = object(&[("name", name.clone()), ("key", generated.clone().into())]);
        self.write("store the encryption key", store::KEYS, |s| async move {
            // Another tab may have stored a key meanwhile: use that one, so
            // two writers never replace each other's key.
            let current = s.get(&name).map_err(Step::Js)?;
            let current = idb::request(&current).await.map_err(Step::Js)?;
            if let Some(key) = (!current.is_undefined())
                .then(|| usable_key(&field(&current, "key")))
                .flatten()
            {
                return Ok(key);
            }
            s.put(&value).map_err(Step::Js)?;
            Ok(generated)
        })
        .await
    }
}

fn read_label(value: &JsValue) -> Option<String> {
    field(value, "label")
        .as_string()
        .filter(|l| !l.trim().is_empty() && l.len() <= limits::MAX_LABEL_BYTES)
}

/// The IV and ciphertext of a stored credential, checked for shape.
fn read_sealed(value: &JsValue, id_text: &str) -> Result<(Uint8Array, Object), String> {
    if !value.is_object() {
        return Err("it is not a credential record".into());
    }
    record_version_ok(value)?;
    if field(value, "id").as_string().as_deref() != Some(id_text) {
        return Err("its id is not the one it is stored under".into());
    }
    let iv = field(value, "iv")
        .dyn_into::<Uint8Array>()
        .map_err(|_| "its iv is not a Uint8Array".to_string())?;
    if iv.length() != limits::IV_BYTES {
        return Err(format!(
            "its iv is {} bytes, not {}",
            iv.length(),
            limits::IV_BYTES
        ));
    }
    let ciphertext = field(value, "ciphertext")
        .dyn_into::<ArrayBuffer>()
        .map_err(|_| "its ciphertext is not an ArrayBuffer".to_string())?;
    let len = ciphertext.byte_length();
    let max = limits::MAX_SECRET_BYTES as u32 + limits::TAG_BYTES;
    if len <= limits::TAG_BYTES || len > max {
        return Err(format!(
            "its ciphertext is {len} bytes, outside {} to {max}",
            limits::TAG_BYTES + 1
        ));
    }
    Ok((iv, ciphertext.into()))
}

/// A stored wrapping key, if it is one this store can use.
fn usable_key(value: &JsValue) -> Option<CryptoKey> {
    let key = value.clone().dyn_into::<CryptoKey>().ok()?;
    let algorithm = key.algorithm().ok()?;
    let name = Reflect::get(&algorithm, &JsValue::from_str("name"))
        .ok()?
        .as_string()?;
    let usages: Vec<String> = key.usages().iter().filter_map(|u| u.as_string()).collect();
    (key.type_() == "secret"
        && name == "AES-GCM"
        && usages.iter().any(|u| u == "encrypt")
        && usages.iter().any(|u| u == "decrypt"))
    .then_some(key)
}

fn crypto() -> Result<Crypto, String> {
    let value = Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))
        .map_err(|_| "crypto is not reachable".to_string())?;
    let crypto: Crypto = value
        .dyn_into()
        .map_err(|_| "this browser context has no crypto".to_string())?;
    let subtle = Reflect::get(&crypto, &JsValue::from_str("subtle")).unwrap_or(JsValue::UNDEFINED);
    if !subtle.is_instance_of::<SubtleCrypto>() {
        return Err("crypto.subtle is missing (not a secure context)".into());
    }
    Ok(crypto)
}

/// AES-GCM parameters: the IV and the credential id as additional data.
fn gcm_params(iv: &Uint8Array, id_text: &str) -> AesGcmParams {
    let params = AesGcmParams::new("AES-GCM", iv);
    params.set_additional_data_u8_array(&Uint8Array::from(id_text.as_bytes()));
    params
}
