//! The runtime workers: spawning them for the controller with the
//! identity it recorded, starting them, relaying a fresh `MessageChannel`
//! between each and the current controller (the reverse dial), and
//! reporting their end to the controller as a claim.

use super::{
    adopt_early, describe, error_detail, now, replay, spawn_worker, with_host, Host, EARLY_RUNTIME,
};
use crate::i18n::{self, Msg};
use lifeline_core::{Generation, RuntimeId, RuntimeIdentity, WorkspaceId};
use lifeline_protocol::{
    check_version, encode, Level, PageToController, PageToRuntime, RuntimeToPage, SecretText,
    PROTOCOL_VERSION,
};
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{Event, MessageChannel, MessageEvent, Worker};

pub(super) struct RuntimeSlot {
    pub(super) worker: Worker,
    pub(super) identity: RuntimeIdentity,
    pub(super) workspace: WorkspaceId,
    /// The environment its commands see. Held until the worker's `Start`
    /// carries it (the runtime keeps it for its life) and then dropped: a
    /// controller restart re-dials without it. Never logged or shown.
    pub(super) env: Vec<(String, SecretText)>,
    /// A resume: the workspace must already exist.
    pub(super) existing_workspace: bool,
    /// The session runs in this local folder, not the sandbox.
    pub(super) folder: Option<lifeline_core::FolderId>,
    pub(super) ready: bool,
    pub(super) spawned_at: f64,
    /// The controller epoch this runtime last got a port to.
    pub(super) dialed: Option<u32>,
}

pub(super) type RuntimeKey = (RuntimeId, Generation);

impl RuntimeSlot {
    pub(super) fn key(&self) -> RuntimeKey {
        (self.identity.runtime, self.identity.generation)
    }
}

/// A follower's controller starts no runtime: the one boot.js started in
/// case this tab leads is ended unused.
pub(super) fn release_early_runtime() {
    if let Some((worker, _)) = adopt_early(EARLY_RUNTIME) {
        worker.set_onmessage(None);
        worker.set_onerror(None);
        worker.terminate();
    }
}

impl Host {
    fn runtime(&mut self, key: RuntimeKey) -> Option<&mut RuntimeSlot> {
        self.runtimes.iter_mut().find(|r| r.key() == key)
    }

    fn take_runtime(&mut self, key: RuntimeKey) -> Option<RuntimeSlot> {
        let i = self.runtimes.iter().position(|r| r.key() == key)?;
        Some(self.runtimes.swap_remove(i))
    }

    pub(super) fn spawn_runtime(
        &mut self,
        identity: RuntimeIdentity,
        workspace: WorkspaceId,
        env: Vec<(String, SecretText)>,
        (existing_workspace, folder): (bool, Option<lifeline_core::FolderId>),
    ) {
        let key = (identity.runtime, identity.generation);
        if self.runtime(key).is_some() {
            return self.notice(
                "runtime-spawn",
                Level::Warning,
                i18n::now_f(
                    Msg::RuntimeAskedAgain,
                    &[
                        &identity.runtime.to_string(),
                        &identity.generation.to_string(),
                    ],
                ),
            );
        }
        // The first runtime is the one boot.js started: it has said `Ready`
        // (or failed to load) and waits, with no identity, for its `Start`.
        let (worker, said) = match adopt_early(EARLY_RUNTIME) {
            Some(early) => early,
            None => match spawn_worker("./runtime.js") {
                Ok(w) => (w, js_sys::Array::new()),
                Err(e) => {
                    self.send(PageToController::RuntimeExited {
                        runtime: key.0,
                        generation: key.1,
                        crashed: true,
                        detail: format!("could not start the runtime worker: {e}"),
                    });
                    return;
                }
            },
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let data = event.data().as_string();
            with_host(|h| h.runtime_message(key, data));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            event.prevent_default();
            let detail = error_detail(&event);
            with_host(|h| h.runtime_crashed(key, detail));
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        replay(said, on_message.as_ref(), on_error.as_ref());
        on_message.forget();
        on_error.forget();
        self.runtimes.push(RuntimeSlot {
            worker,
            identity,
            workspace,
            env,
            existing_workspace,
            folder,
            ready: false,
            spawned_at: now(),
            dialed: None,
        });
    }

    /// A resume rejoined this runtime with its profile's current
    /// environment: hand it over (or, before `Start`, start with it).
    pub(super) fn runtime_environment(&mut self, key: RuntimeKey, env: Vec<(String, SecretText)>) {
        let Some(slot) = self.runtime(key) else {
            return self.notice(
                "runtime-environment",
                Level::Warning,
                i18n::now_f(
                    Msg::RuntimeEnvUnknown,
                    &[&key.0.to_string(), &key.1.to_string()],
                ),
            );
        };
        if !slot.ready {
            slot.env = env;
            return;
        }
        let message = encode(&PageToRuntime::Environment { env });
        if let Err(e) = slot.worker.post_message(&JsValue::from_str(&message)) {
            self.runtime_crashed(
                key,
                format!("could not hand it its environment: {}", describe(&e)),
            );
        }
    }

    fn runtime_message(&mut self, key: RuntimeKey, data: Option<String>) {
        if self.runtime(key).is_none() {
            return;
        }
        let Some(text) = data else {
            return self.notice(
                "runtime-message",
                Level::Error,
                i18n::now(Msg::RuntimeNotMessage).into(),
            );
        };
        match lifeline_codec::decode_message::<RuntimeToPage>(&text) {
            Ok(RuntimeToPage::Ready { protocol }) => {
                if let Err(e) = check_version(protocol) {
                    return self.runtime_crashed(key, format!("the runtime worker {e}"));
                }
                let Some(slot) = self.runtime(key) else {
                    return;
                };
                if slot.ready {
                    return;
                }
                let start = encode(&PageToRuntime::Start {
                    protocol: PROTOCOL_VERSION,
                    identity: slot.identity,
                    workspace: slot.workspace,
                    // Sent once: the runtime keeps its environment for its
                    // life, so the page need not hold the secrets any longer.
                    env: std::mem::take(&mut slot.env),
                    existing_workspace: slot.existing_workspace,
                    folder: slot.folder,
                });
                if let Err(e) = slot.worker.post_message(&JsValue::from_str(&start)) {
                    return self
                        .runtime_crashed(key, format!("could not start it: {}", describe(&e)));
                }
                slot.ready = true;
                self.relay(key);
            }
            Ok(RuntimeToPage::Error { message }) => {
                self.notice(
                    "runtime-error",
                    Level::Error,
                    i18n::now_f(Msg::RuntimeFailed, &[&message]),
                );
                self.runtime_crashed(key, message);
            }
            Err(e) => self.notice(
                "runtime-message",
                Level::Error,
                i18n::now_f(Msg::FromRuntime, &[&e.to_string()]),
            ),
        }
    }

    /// Hands a fresh channel to the runtime and the current controller, once
    /// per controller.
    pub(super) fn relay(&mut self, key: RuntimeKey) {
        let Some(c) = self.controller.as_ref().filter(|c| c.started) else {
            return;
        };
        let Some(slot) = self.runtimes.iter_mut().find(|r| r.key() == key) else {
            return;
        };
        if !slot.ready || slot.dialed == Some(c.epoch) {
            return;
        }
        let result = (|| -> Result<(), JsValue> {
            let channel = MessageChannel::new()?;
            let port = encode(&PageToController::RuntimePort {
                runtime: key.0,
                generation: key.1,
            });
            c.worker.post_message_with_transfer(
                &JsValue::from_str(&port),
                &js_sys::Array::of1(&channel.port1()),
            )?;
            slot.worker.post_message_with_transfer(
                &JsValue::from_str(&encode(&PageToRuntime::Dial)),
                &js_sys::Array::of1(&channel.port2()),
            )
        })();
        slot.dialed = Some(c.epoch);
        if let Err(e) = result {
            self.notice(
                "runtime-relay",
                Level::Error,
                i18n::now_f(Msg::RuntimeRelayFailed, &[&describe(&e)]),
            );
        }
    }

    pub(super) fn runtime_crashed(&mut self, key: RuntimeKey, detail: String) {
        let Some(slot) = self.take_runtime(key) else {
            return;
        };
        slot.worker.set_onmessage(None);
        slot.worker.set_onerror(None);
        slot.worker.terminate();
        self.send(PageToController::RuntimeExited {
            runtime: key.0,
            generation: key.1,
            crashed: true,
            detail,
        });
    }

    pub(super) fn terminate_runtime(&mut self, key: RuntimeKey) {
        let detail = match self.take_runtime(key) {
            Some(slot) => {
                slot.worker.set_onmessage(None);
                slot.worker.set_onerror(None);
                slot.worker.terminate();
                "terminated at the controller's request".to_owned()
            }
            None => "no such worker in this tab".to_owned(),
        };
        self.send(PageToController::RuntimeExited {
            runtime: key.0,
            generation: key.1,
            crashed: false,
            detail,
        });
    }
}
