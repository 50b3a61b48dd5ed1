//! Persistent storage: only a window may ask the browser to keep this
//! origin's data; the controller is told the answer.

use crate::ui::Persist;
use leptos::prelude::*;
use lifeline_protocol::PageToController;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::{describe, with_host};

/// Asks the browser to keep this origin's data (only a window may ask).
pub fn keep_data() {
    let Some(ui) = with_host(|h| h.ui) else {
        return;
    };
    ui.persist.set(Persist::Asking);
    let promise = window().navigator().storage().persist();
    spawn_local(async move {
        let answer = match promise {
            Ok(p) => JsFuture::from(p).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(value) => {
                let persisted = value.as_bool() == Some(true);
                ui.persist.set(if persisted {
                    Persist::Idle
                } else {
                    Persist::Refused
                });
                with_host(|h| h.send(PageToController::StoragePersisted { persisted }));
            }
            Err(e) => ui.persist.set(Persist::Failed(describe(&e))),
        }
    });
}
