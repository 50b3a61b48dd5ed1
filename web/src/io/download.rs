//! Saving an exported archive: the controller answers `ExportReady` and
//! then posts the archive as a transferred `ArrayBuffer`; the page saves it
//! with an `<a download>` on an object URL and revokes the URL afterwards.

use std::cell::RefCell;

use js_sys::{Array, ArrayBuffer};
use leptos::prelude::*;
use lifeline_core::SessionId;
use wasm_bindgen::{prelude::*, JsCast};

use super::{describe, page_notice};
use crate::evidence::signals;
use crate::i18n::{self, Msg};

thread_local! {
    /// The `ExportReady` whose archive is the next binary message.
    static DOWNLOAD: RefCell<Option<(String, u64)>> = const { RefCell::new(None) };
}

/// The next binary message is a file of `bytes` bytes to save (an export,
/// or a command's output: both come after an `ExportReady`).
pub(super) fn expect_download(_session: SessionId, file_name: String, bytes: u64) {
    DOWNLOAD.with(|d| *d.borrow_mut() = Some((file_name, bytes)));
}

/// The controller died: an export or import it was carrying ended with
/// it, and the controls are free again.
pub(super) fn controller_gone() {
    signals().busy.set(false);
    DOWNLOAD.with(|d| d.borrow_mut().take());
}

/// A binary message from the controller: the archive `ExportReady` announced.
pub(super) fn received_buffer(buffer: ArrayBuffer) {
    signals().busy.set(false);
    let Some((file_name, bytes)) = DOWNLOAD.with(|d| d.borrow_mut().take()) else {
        return;
    };
    if buffer.byte_length() as u64 != bytes {
        return page_notice(
            "export",
            i18n::now_f(
                Msg::ExportShort,
                &[&buffer.byte_length().to_string(), &bytes.to_string()],
            ),
        );
    }
    if let Err(e) = save(&buffer, &file_name) {
        page_notice(
            "export",
            i18n::now_f(Msg::CouldNotSave, &[&file_name, &describe(&e)]),
        );
    }
}

fn save(buffer: &ArrayBuffer, file_name: &str) -> Result<(), JsValue> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(if file_name.ends_with(".txt") {
        "text/plain"
    } else {
        "application/x-tar"
    });
    let blob =
        web_sys::Blob::new_with_buffer_source_sequence_and_options(&Array::of1(buffer), &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let document = document();
    let a: web_sys::HtmlAnchorElement = document.create_element("a")?.unchecked_into();
    a.set_href(&url);
    a.set_download(file_name);
    a.set_hidden(true);
    document.body().ok_or("no body")?.append_child(&a)?;
    a.click();
    a.remove();
    // The download has its own reference by now; free ours a little later.
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    window()
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 10_000)?;
    Ok(())
}
