//! The reader's language, and every message to the page worded in it.
//!
//! The core and the engine speak in phrases; the page receives text
//! (`ControllerToPage<String>`), worded here at the one place messages
//! leave for the page, so it carries no phrase decoder and no wording code.

use lifeline_core::phrase::Phrase;
use lifeline_core::ViewDelta;
use lifeline_protocol::ControllerToPage;
use lifeline_words::Locale;
use std::cell::Cell;
use std::rc::Rc;

use crate::shell::Shell;

thread_local! {
    static LOCALE: Cell<Locale> = const { Cell::new(Locale::En) };
    static FETCHING: Cell<bool> = const { Cell::new(false) };
}

/// Words from now on in the language `tag` names (English for a tag this
/// app does not speak). True if that changed the language.
pub fn choose(tag: &str) -> bool {
    let locale = Locale::from_tag(tag).unwrap_or_default();
    LOCALE.replace(locale) != locale
}

/// `message` as the page receives it.
pub fn word(message: ControllerToPage) -> ControllerToPage<String> {
    message.word(&mut wording)
}

/// One delta as the page receives it.
pub fn word_delta(delta: ViewDelta) -> ViewDelta<String> {
    delta.word(&mut wording)
}

/// One function item for every message, so the generic `word`s are
/// instantiated once for it rather than once per closure.
fn wording(phrase: Phrase) -> String {
    lifeline_words::phrase(LOCALE.get(), &phrase)
}

/// German is chosen and its phrases are not here yet (the worker's wasm
/// carries English only): fetches them once; when they arrive, what the
/// page shows is worded again. Until then, and if the asset cannot be had,
/// phrases stay in English (the page says so for its own labels, which
/// come from the same bundle).
pub fn fetch_german(shell: &Rc<Shell>) {
    if LOCALE.get() != Locale::De || lifeline_words::german::ready() || FETCHING.replace(true) {
        return;
    }
    let shell = shell.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let installed = load().await == Some(true);
        FETCHING.set(false);
        if installed && LOCALE.get() == Locale::De {
            shell.language();
        }
    });
}

/// The asset, checked by `german::install`: `None` when it could not be
/// fetched or read, `Some(false)` when it was written for another key list.
async fn load() -> Option<bool> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let fetched = crate::web::scope().fetch_with_str(lifeline_words::german::ASSET);
    let response: web_sys::Response = JsFuture::from(fetched).await.ok()?.dyn_into().ok()?;
    if !response.ok() {
        return None;
    }
    let parsed = JsFuture::from(response.json().ok()?).await.ok()?;
    let array: js_sys::Array = parsed.dyn_into().ok()?;
    let first = array.get(0).as_f64()?;
    let fingerprint = u32::try_from(first as i64)
        .ok()
        .filter(|n| f64::from(*n) == first)?;
    let texts = array
        .iter()
        .skip(1)
        .map(|v| v.as_string())
        .collect::<Option<Vec<String>>>()?;
    Some(lifeline_words::german::install(fingerprint, texts))
}
