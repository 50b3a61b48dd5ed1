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

thread_local! {
    static LOCALE: Cell<Locale> = const { Cell::new(Locale::En) };
}

/// Words from now on in the language `tag` names (English for a tag this
/// app does not speak). True if that changed the language.
pub fn choose(tag: &str) -> bool {
    let locale = Locale::from_tag(tag).unwrap_or_default();
    LOCALE.replace(locale) != locale
}

/// `message` as the page receives it.
pub fn word(message: ControllerToPage) -> ControllerToPage<String> {
    let locale = LOCALE.get();
    message.word(&mut |p: Phrase| lifeline_words::phrase(locale, &p))
}

/// One delta as the page receives it.
pub fn word_delta(delta: ViewDelta) -> ViewDelta<String> {
    let locale = LOCALE.get();
    delta.word(&mut |p: Phrase| lifeline_words::phrase(locale, &p))
}
