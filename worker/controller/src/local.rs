//! Importing a local GGUF model for a profile: the file's header is read
//! here (`lifeline_provider::gguf`) and the file copied into the private
//! file system by `web/static/local-model.js`. Running the model is the
//! provider worker's (`worker/provider`).

use js_sys::{Function, Promise, Reflect};
use lifeline_core::phrase::Phrase;
use lifeline_core::profile::{LocalFile, LocalModel, ModelFileFault, Provider, Sampling};
use lifeline_protocol::ControllerToPage;
use lifeline_provider::gguf::{read_header, GgufError};
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_split_helpers::SplitLoaderError;

use crate::shell::post;

/// `local-model.js`, imported on first use through the function
/// `controller.js` leaves on the global scope.
pub async fn module() -> Result<JsValue, JsValue> {
    let import: Function =
        Reflect::get(&js_sys::global(), &"lifelineLocalModel".into())?.dyn_into()?;
    let promise: Promise = import.call0(&JsValue::UNDEFINED)?.dyn_into()?;
    JsFuture::from(promise).await
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// The most of a file read for its header. Real headers are a few MB (the
/// vocabulary); one that claims more is refused rather than read whole.
const MAX_HEADER_BYTES: u64 = 64 * 1024 * 1024;

/// A file the page picked for a local model profile: read its header,
/// copy it into the private file system, and answer with its facts or why
/// it cannot be a model.
pub fn import(file: JsValue) {
    wasm_bindgen_futures::spawn_local(async move {
        let (provider, said, sampling) = match importing(file).await {
            Ok(read) => read.await,
            Err(_) => (None, Phrase::NotLoaded, Vec::new()),
        };
        post(ControllerToPage::LocalModel {
            provider,
            said,
            sampling,
        });
    });
}

/// What [`import`] answers: the profile's provider, what to say of the
/// file, and its sampling's texts.
type Imported = (Option<Provider>, Phrase, Vec<String>);

/// The import, in the module a profile's save is in (`cargo xtask build`
/// splits it off): both happen in the Profiles dialog, and most visits do
/// neither. If it cannot be fetched, nothing was read or copied.
#[wasm_split_helpers::wasm_split(profile_save, fallible)]
fn importing(file: JsValue) -> Result<Pin<Box<dyn Future<Output = Imported>>>, SplitLoaderError> {
    Ok(Box::pin(async move {
        match imported(&file).await {
            Ok(file) => {
                let model = LocalModel {
                    sampling: Sampling::for_model(file.context_length),
                    file,
                };
                let said = Phrase::local_model_facts(&model.file, &model.sampling);
                (Some(model.provider()), said, model.sampling.texts())
            }
            Err(fault) => (None, Phrase::LocalModelRefused { fault }, Vec::new()),
        }
    }))
}

/// What a person is told of a header the reader refused; its `Display`
/// is for the log.
fn model_file_fault(e: &GgufError) -> ModelFileFault {
    match e {
        GgufError::NotGguf => ModelFileFault::NotGguf,
        GgufError::Version(version) => ModelFileFault::Version { version: *version },
        GgufError::Truncated { .. } => ModelFileFault::Truncated,
        GgufError::Malformed(_) => ModelFileFault::Damaged,
        GgufError::NoArchitecture => ModelFileFault::NoArchitecture,
    }
}

async fn imported(file: &JsValue) -> Result<LocalFile, ModelFileFault> {
    // The browser's own message where it gives one, else the exception's
    // name: words from outside, not ours.
    let js = |e: JsValue| ModelFileFault::Unreadable {
        detail: get(&e, "message")
            .as_string()
            .unwrap_or_else(|| lifeline_store::exception_name(&e)),
    };
    let module = module().await.map_err(js)?;
    let name = get(file, "name").as_string().unwrap_or_default();
    let size = get(file, "size").as_f64().unwrap_or(0.0) as u64;
    let head: Function = get(&module, "head").dyn_into().map_err(js)?;
    let mut want: u64 = 1024 * 1024;
    let facts = loop {
        let promise: Promise = head
            .call2(&module, file, &(want as f64).into())
            .and_then(|p| p.dyn_into().map_err(JsValue::from))
            .map_err(js)?;
        let bytes = js_sys::Uint8Array::new(&JsFuture::from(promise).await.map_err(js)?).to_vec();
        match read_header(&bytes) {
            Ok(facts) => break facts,
            Err(GgufError::Truncated { need })
                if need <= MAX_HEADER_BYTES && need <= size && (bytes.len() as u64) < need =>
            {
                want = need.max(want * 4).min(MAX_HEADER_BYTES);
            }
            Err(e) => {
                crate::web::log(&e.to_string());
                return Err(model_file_fault(&e));
            }
        }
    };
    let mut id = [0u8; 6];
    if let Ok(bytes) = crate::web::random_bytes::<6>() {
        id = bytes;
    }
    let prefix: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let plain: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
        .take(120)
        .collect();
    let stored_as = format!("{prefix}-{}", plain.trim_start_matches('.'));
    let copy: Function = get(&module, "importModel").dyn_into().map_err(js)?;
    let promise: Promise = copy
        .call2(&module, file, &stored_as.as_str().into())
        .and_then(|p| p.dyn_into().map_err(JsValue::from))
        .map_err(js)?;
    JsFuture::from(promise).await.map_err(js)?;
    let short = |s: String| s.chars().take(200).collect::<String>();
    Ok(LocalFile {
        name: short(name),
        size,
        stored_as,
        architecture: short(facts.architecture),
        parameters: facts.parameters,
        context_length: facts.context_length.unwrap_or(0),
        model_name: facts.name.map(short),
    })
}
