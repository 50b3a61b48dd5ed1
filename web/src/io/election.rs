//! The leader election: the Web Lock `lifeline-leader` says which tab's
//! controller writes the journal; the others follow until it lets go.
//! (web-sys binds Web Locks only under an unstable cfg, so this goes
//! through `Reflect`.)

use super::{describe, with_host, Host};
use crate::i18n::{self, Msg};
use leptos::prelude::*;
use lifeline_protocol::{PageToController, Role};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::{spawn_local, JsFuture};

const LEADER_LOCK: &str = "lifeline-leader";

fn never_resolves() -> JsValue {
    js_sys::Promise::new(&mut |_, _| {}).into()
}

pub(super) fn elect() {
    let result = (|| -> Result<(), String> {
        let navigator = window().navigator();
        let locks = js_sys::Reflect::get(&navigator, &"locks".into()).map_err(|e| describe(&e))?;
        if locks.is_undefined() || locks.is_null() {
            return Err(i18n::now(Msg::NoWebLocks).into());
        }
        let request: js_sys::Function = js_sys::Reflect::get(&locks, &"request".into())
            .map_err(|e| describe(&e))?
            .dyn_into()
            .map_err(|_| "navigator.locks.request is not a function".to_string())?;
        let options = js_sys::Object::new();
        js_sys::Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE)
            .map_err(|e| describe(&e))?;
        let wait = {
            let (locks, request) = (locks.clone(), request.clone());
            move || {
                // Queue behind the leading tab; granted when it lets go.
                let on_grant = Closure::once_into_js(|_lock: JsValue| -> JsValue {
                    with_host(Host::promoted);
                    never_resolves()
                });
                watch(request.call2(&locks, &LEADER_LOCK.into(), &on_grant));
            }
        };
        let on_answer = Closure::once_into_js(move |lock: JsValue| -> JsValue {
            if lock.is_null() || lock.is_undefined() {
                with_host(|h| h.elected(Role::Follower));
                wait();
                JsValue::UNDEFINED
            } else {
                with_host(|h| h.elected(Role::Leader));
                // Held for the page's lifetime.
                never_resolves()
            }
        });
        watch(request.call3(&locks, &LEADER_LOCK.into(), &options, &on_answer));
        Ok(())
    })();
    if let Err(reason) = result {
        with_host(|h| h.fail(reason));
    }
}

/// Reports a lock request that throws or rejects.
fn watch(call: Result<JsValue, JsValue>) {
    let promise = match call.map(|v| v.dyn_into::<js_sys::Promise>()) {
        Ok(Ok(p)) => p,
        Ok(Err(_)) => return,
        Err(e) => {
            let reason = i18n::now_f(Msg::ElectionFailed, &[&describe(&e)]);
            with_host(|h| h.fail(reason));
            return;
        }
    };
    spawn_local(async move {
        if let Err(e) = JsFuture::from(promise).await {
            let reason = i18n::now_f(Msg::ElectionFailed, &[&describe(&e)]);
            with_host(|h| h.fail(reason));
        }
    });
}

impl Host {
    fn elected(&mut self, role: Role) {
        if role == Role::Follower {
            super::runtimes::release_early_runtime();
        }
        self.role = Some(role);
        self.ui.role.set(Some(role));
        self.send_start();
    }

    fn promoted(&mut self) {
        let was = self.role;
        self.role = Some(Role::Leader);
        self.ui.role.set(Some(Role::Leader));
        if was == Some(Role::Follower) && self.controller.as_ref().is_some_and(|c| c.started) {
            self.send(PageToController::Promote);
        } else {
            self.send_start();
        }
    }
}
