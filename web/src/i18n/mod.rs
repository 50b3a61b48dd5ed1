//! Locale catalogs: every text the page itself renders, in English and
//! German.
//!
//! A plain `match` per locale (no crate, no runtime parsing): a key without a
//! text in either locale does not compile. English is the UI contract: the
//! accessible names of DESIGN.md are these English texts, exactly, and the
//! end-to-end tests find things by them.
//!
//! Texts composed by the core and the controller (the recovery card's
//! summary, cause, details, rows' evidence and reasons; controller notices
//! and prompt refusals) arrive as structured phrases
//! (`lifeline_core::phrase::Phrase`: a message identity with typed
//! arguments) and are worded here by [`phrase`], an exhaustive `match`: a
//! new phrase without a text in every locale does not compile. Numbers and
//! sizes are formatted per locale ([`num`], [`bytes`]). Free text from
//! outside (a browser's or a provider's error message, a file name, a
//! command line) stays an argument and is not translated.
//!
//! The locale lives in one page-wide signal: components read it through
//! [`tr`] and [`text`] (tracked), so a switch re-renders the texts in place
//! without disturbing any other state.
//!
//! Layout: `catalog` holds the keys and their texts, `format` the wording
//! (parameters, numbers, sizes, the core's enums as keys, phrases),
//! `german` fetches the German texts, this module the page-wide locale and
//! the `Language` select.

mod catalog;
mod format;
mod german;

pub use catalog::{t, Msg};
pub use format::*;

use crate::ui::NoticeItem;
use leptos::prelude::*;
use lifeline_protocol::Level;
use std::cell::Cell;
use wasm_bindgen::JsCast;

/// The `localStorage` key that keeps the reader's choice.
pub const STORAGE_KEY: &str = "lifeline-locale";

pub use lifeline_words::Locale;

// The page-wide locale.

thread_local! {
    // Reference-counted, so no component owner disposes it. The locale the
    // texts are shown in: German only once its texts are here.
    static LOCALE: ArcRwSignal<Locale> = ArcRwSignal::new(Locale::En);
    // The reader's latest choice, which a slow fetch must not overrule.
    static WANTED: Cell<Locale> = const { Cell::new(Locale::En) };
    // Where a German asset that cannot be read is reported.
    static NOTICES: Cell<Option<RwSignal<Vec<NoticeItem>>>> = const { Cell::new(None) };
}

const GERMAN_NOTICE: &str = "page:german";

/// The current locale (tracked).
pub fn locale() -> Locale {
    LOCALE.with(|l| l.get())
}

/// The current locale, for texts composed once (notices, form errors).
pub fn locale_untracked() -> Locale {
    LOCALE.with(|l| l.get_untracked())
}

/// `msg` in the current locale (tracked).
pub fn tr(msg: Msg) -> &'static str {
    t(locale(), msg)
}

/// `msg` in the current locale filled with `args` (tracked).
pub fn tf(msg: Msg, args: &[&str]) -> String {
    tf_in(locale(), msg, args)
}

/// `msg` in the current locale, untracked.
pub fn now(msg: Msg) -> &'static str {
    t(locale_untracked(), msg)
}

/// `msg` in the current locale filled with `args`, untracked.
pub fn now_f(msg: Msg, args: &[&str]) -> String {
    tf_in(locale_untracked(), msg, args)
}

/// A reactive text for a view or an attribute: follows the locale. One
/// closure type for every key keeps the wasm small.
pub fn text(msg: Msg) -> impl Fn() -> &'static str + Copy + Send + Sync + 'static {
    move || tr(msg)
}

/// The stored choice, else the browser's preferred languages. A German
/// asset that cannot be read is reported in `notices`.
pub fn init(notices: RwSignal<Vec<NoticeItem>>) {
    NOTICES.set(Some(notices));
    let window = web_sys::window();
    let stored = window
        .as_ref()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        .and_then(|tag| Locale::from_tag(&tag));
    let chosen = stored.unwrap_or_else(|| {
        let Some(navigator) = window.as_ref().map(|w| w.navigator()) else {
            return Locale::En;
        };
        let mut tags: Vec<String> = navigator
            .languages()
            .iter()
            .filter_map(|v| v.as_string())
            .collect();
        if tags.is_empty() {
            tags.extend(navigator.language());
        }
        Locale::detect(tags.iter().map(String::as_str))
    });
    apply(chosen);
}

/// The reader picked `locale`: keep it and apply it.
pub fn choose(locale: Locale) {
    if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = storage.set_item(STORAGE_KEY, locale.tag());
    }
    apply(locale);
}

fn apply(locale: Locale) {
    WANTED.set(locale);
    if locale == Locale::En || german::ready() {
        show(locale);
        return;
    }
    // English stays up while the German texts are fetched.
    wasm_bindgen_futures::spawn_local(async {
        let loaded = german::load().await;
        if WANTED.get() != Locale::De {
            return;
        }
        if loaded {
            show(Locale::De);
        } else {
            WANTED.set(Locale::En);
            // The select already says Deutsch (the reader changed it, not
            // the locale): have it say what is shown.
            if let Some(select) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id("language"))
                .and_then(|e| e.dyn_into::<web_sys::HtmlSelectElement>().ok())
            {
                select.set_value(Locale::En.tag());
            }
        }
        german_notice(!loaded);
    });
}

fn german_notice(failed: bool) {
    let Some(notices) = NOTICES.get() else { return };
    notices.update(|list| {
        list.retain(|n| n.key != GERMAN_NOTICE);
        if failed {
            let revision = list.iter().map(|n| n.revision).max().unwrap_or(0) + 1;
            list.push(NoticeItem {
                key: GERMAN_NOTICE.to_owned(),
                level: Level::Warning,
                message: now(Msg::GermanUnavailable).to_owned(),
                revision,
            });
        }
    });
}

fn show(locale: Locale) {
    LOCALE.with(|l| {
        if l.get_untracked() != locale {
            l.set(locale);
        }
    });
    if let Some(html) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = html.set_attribute("lang", locale.tag());
    }
}

/// The `Language` select for the details pane.
#[component]
pub fn LanguageSelect() -> impl IntoView {
    view! {
        <label for="language">{text(Msg::Language)}</label>
        <select
            id="language"
            prop:value=move || locale().tag()
            on:change:target=move |ev| {
                if let Some(l) = Locale::from_tag(&ev.target().value()) {
                    choose(l);
                }
            }
        >
            {Locale::ALL
                .map(|l| {
                    view! {
                        <option value=l.tag() lang=l.tag() selected=move || locale() == l>
                            {l.endonym()}
                        </option>
                    }
                })}
        </select>
    }
}

#[cfg(test)]
mod tests;
