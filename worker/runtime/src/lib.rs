//! The runtime worker: one runtime identity and generation for its whole
//! life, executing the built-in shell against the session's OPFS workspace.
//!
//! `lifeline_core::Runtime` holds the protocol state (acknowledge before
//! start, dense event sequences, the unacknowledged tail kept for a resend
//! after a reverse dial); this shell carries out its effects: port messages,
//! the heartbeat timer, and processes ([`process`]).
//!
//! | module | what it holds |
//! |---|---|
//! | [`process`] | one running command: output batching, kill, exit |
//! | [`opfs`] | the workspace in the Origin Private File System |
//! | `life` | the Web Lock held for the worker's life, whose release tells the controller it ended |

// Talc instead of the default dlmalloc: the same single-threaded heap in
// fewer bytes of wasm.
#[cfg(target_family = "wasm")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The workspace host lives in its own crate, shared with the controller
/// (workspace-only access); re-exported under its old path.
pub use lifeline_opfs as opfs;
pub mod process;

use lifeline_shell::LiteMap;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use lifeline_core::{
    ControllerToRuntime, Millis, ProcessOutput, Runtime, RuntimeConfig, RuntimeEffect,
    RuntimeError, RuntimeIdentity, WorkspaceId,
};
use lifeline_protocol::{
    check_version, encode, PageToRuntime, RuntimeToPage, SecretText, PROTOCOL_VERSION,
};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::spawn_local;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

use process::Process;

pub(crate) fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

pub(crate) fn now() -> Millis {
    Millis(js_sys::Date::now().max(0.0) as u64)
}

fn post_to_page(message: &RuntimeToPage) {
    let _ = scope().post_message(&JsValue::from_str(&encode(message)));
}

/// A one-shot timer, cancelled explicitly.
pub(crate) struct Timeout {
    id: i32,
    _callback: Closure<dyn FnMut()>,
}

impl Timeout {
    pub(crate) fn new(delay_ms: u64, f: impl FnOnce() + 'static) -> Option<Timeout> {
        let mut f = Some(f);
        let callback = Closure::<dyn FnMut()>::new(move || {
            if let Some(f) = f.take() {
                f()
            }
        });
        let id = scope()
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                callback.as_ref().unchecked_ref(),
                delay_ms.min(i32::MAX as u64) as i32,
            )
            .ok()?;
        Some(Timeout {
            id,
            _callback: callback,
        })
    }

    pub(crate) fn cancel(&self) {
        scope().clear_timeout_with_handle(self.id);
    }
}

struct Link {
    port: MessagePort,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

pub(crate) struct Worker {
    runtime: RefCell<Option<Runtime>>,
    workspace: RefCell<Option<Rc<opfs::OpfsWorkspace>>>,
    workspace_id: Cell<Option<WorkspaceId>>,
    link: RefCell<Option<Link>>,
    /// A port that arrived before the workspace was open.
    waiting_port: RefCell<Option<MessagePort>>,
    processes: RefCell<lifeline_core::flat::FlatMap<lifeline_core::CommandId, Rc<Process>>>,
    heartbeat: RefCell<Option<Timeout>>,
    env: RefCell<LiteMap<String, String>>,
    /// The names the runtime sets itself, which a profile cannot replace.
    own_env: RefCell<Vec<String>>,
    pumping: Cell<bool>,
    /// `workspaces/`, asked for by `runtime.js` as the worker booted.
    ahead: Option<opfs::Ahead>,
}

impl Worker {
    fn start(
        self: &Rc<Self>,
        identity: RuntimeIdentity,
        workspace: WorkspaceId,
        launch_env: Vec<(String, SecretText)>,
        existing_workspace: bool,
        folder: Option<lifeline_core::FolderId>,
    ) {
        if self.workspace_id.get().is_some() {
            return;
        }
        self.workspace_id.set(Some(workspace));
        let mut env = LiteMap::new_vec();
        env.insert("HOME".to_string(), "/".to_string());
        env.insert("LIFELINE_WORKSPACE".to_string(), workspace.to_string());
        env.insert("LIFELINE_RUNTIME".to_string(), identity.runtime.to_string());
        env.insert(
            "LIFELINE_GENERATION".to_string(),
            identity.generation.0.to_string(),
        );
        // The profile's variables, resolved at the controller's launch
        // checkpoint; the names the runtime sets itself take precedence.
        *self.own_env.borrow_mut() = env.keys().cloned().collect();
        for (name, value) in launch_env {
            let _ = env.try_insert(name, value.0);
        }
        *self.env.borrow_mut() = env;
        let worker = self.clone();
        spawn_local(async move {
            // Held before there is a runtime to say hello, so a controller
            // that waits for it after the hello waits for this worker's end.
            // Without Web Locks the controller has heartbeats only.
            let _ = lifeline_locks::hold_for_life(&lifeline_protocol::runtime_life_lock(
                identity.runtime,
                identity.generation,
            ))
            .await;
            let id = workspace.to_string();
            let opened = match folder {
                // The user's folder: opened only if access is granted now
                // (a runtime cannot ask; the page does, on a click).
                Some(folder) => opfs::folders::open_workspace(folder, &id).await.map_err(
                    |access| match access {
                        lifeline_core::environment::FolderAccess::NeedsPermission => {
                            "the browser needs your permission again to use the folder".into()
                        }
                        _ => "the folder is no longer available in this browser".to_string(),
                    },
                ),
                // A resume's workspace must exist; a new one is created.
                None => {
                    opfs::OpfsWorkspace::open_ahead(worker.ahead.as_ref(), &id, !existing_workspace)
                        .await
                        .map_err(|e| e.to_string())
                }
            };
            match opened {
                Ok(ws) => {
                    *worker.workspace.borrow_mut() = Some(Rc::new(ws));
                    *worker.runtime.borrow_mut() =
                        Some(Runtime::new(RuntimeConfig::new(identity), now()));
                    // The first heartbeat timer comes from the core's first tick.
                    if let Some(rt) = worker.runtime.borrow_mut().as_mut() {
                        rt.handle_timer(now());
                    }
                    if let Some(port) = worker.waiting_port.borrow_mut().take() {
                        worker.dial(port);
                    }
                    worker.pump();
                }
                Err(e) => post_to_page(&RuntimeToPage::Error {
                    message: format!("the workspace could not be opened: {e}"),
                }),
            }
        });
    }

    fn set_profile_env(&self, launch_env: Vec<(String, SecretText)>) {
        let mut env = self.env.borrow_mut();
        let own = self.own_env.borrow();
        env.retain(|name, _| own.contains(name));
        for (name, value) in launch_env {
            let _ = env.try_insert(name, value.0);
        }
    }

    /// A (new) port to a controller: drop the old one and say hello.
    fn dial(self: &Rc<Self>, port: MessagePort) {
        if self.runtime.borrow().is_none() {
            if let Some(old) = self.waiting_port.borrow_mut().replace(port) {
                old.close();
            }
            return;
        }
        let weak = Rc::downgrade(self);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            if let Some(worker) = weak.upgrade() {
                worker.controller_message(&event);
            }
        });
        port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        if let Some(old) = self.link.borrow_mut().replace(Link {
            port,
            _on_message: on_message,
        }) {
            old.port.set_onmessage(None);
            old.port.close();
        }
        if let Some(rt) = self.runtime.borrow_mut().as_mut() {
            rt.handle_disconnected(now());
            rt.handle_connected(now());
        }
        self.pump();
    }

    fn controller_message(self: &Rc<Self>, event: &MessageEvent) {
        let Some(text) = event.data().as_string() else {
            return;
        };
        // A malformed message is refused; it never takes the worker down,
        // and the controller's next message or resend request goes on.
        let Ok(message) = lifeline_codec::decode_message::<ControllerToRuntime>(&text) else {
            return;
        };
        if let Some(rt) = self.runtime.borrow_mut().as_mut() {
            let _ = rt.handle_controller(message, now());
        }
        self.pump();
    }

    /// Hands process output or exit to the core; `BufferFull` means the
    /// controller has not confirmed enough yet, and the caller keeps it.
    pub(crate) fn report(
        self: &Rc<Self>,
        command: lifeline_core::CommandId,
        output: ProcessOutput,
    ) -> Result<(), RuntimeError> {
        let result = match self.runtime.borrow_mut().as_mut() {
            Some(rt) => rt.handle_process(command, output, now()),
            None => Ok(()),
        };
        self.pump();
        result
    }

    pub(crate) fn finished(&self, command: lifeline_core::CommandId) {
        self.processes.borrow_mut().remove(&command);
    }

    pub(crate) fn pump(self: &Rc<Self>) {
        if self.pumping.replace(true) {
            return;
        }
        loop {
            let effect = self
                .runtime
                .borrow_mut()
                .as_mut()
                .and_then(|r| r.poll_effect());
            let Some(effect) = effect else { break };
            match effect {
                RuntimeEffect::Send(message) => {
                    if let Some(link) = self.link.borrow().as_ref() {
                        let (sent, moved) = lifeline_codec::frame::frame(message);
                        let _ = link.port.post_message_with_transferable(&sent, &moved);
                    }
                }
                RuntimeEffect::StartProcess { command, binding } => {
                    let Some(workspace) = self.workspace.borrow().clone() else {
                        continue;
                    };
                    let capabilities = binding.capabilities.iter().cloned().collect();
                    let process = Process::new(command);
                    self.processes.borrow_mut().insert(command, process.clone());
                    let env = self.env.borrow().clone();
                    process.spawn(self.clone(), workspace, binding, env, capabilities);
                }
                RuntimeEffect::KillProcess { command } => {
                    if let Some(p) = self.processes.borrow().get(&command) {
                        p.kill();
                    }
                }
                RuntimeEffect::SetTimer { at } => {
                    let weak = Rc::downgrade(self);
                    let delay = at.0.saturating_sub(now().0);
                    let timer = Timeout::new(delay, move || {
                        if let Some(worker) = weak.upgrade() {
                            if let Some(rt) = worker.runtime.borrow_mut().as_mut() {
                                rt.handle_timer(now());
                            }
                            worker.pump();
                        }
                    });
                    if let Some(old) = std::mem::replace(&mut *self.heartbeat.borrow_mut(), timer) {
                        old.cancel();
                    }
                }
                RuntimeEffect::Shutdown { reason } => {
                    for p in self.processes.borrow().values() {
                        p.kill();
                    }
                    post_to_page(&RuntimeToPage::Error {
                        message: format!("the controller refused this runtime: {reason}"),
                    });
                }
            }
        }
        self.pumping.set(false);
    }
}

/// Entry point, called by `runtime.js` once the module is instantiated,
/// with the promise of `workspaces/` it asked for first ([`opfs::Ahead`]).
#[wasm_bindgen]
pub fn run_runtime(workspaces: JsValue) {
    let worker = Rc::new(Worker {
        runtime: RefCell::new(None),
        workspace: RefCell::new(None),
        workspace_id: Cell::new(None),
        link: RefCell::new(None),
        waiting_port: RefCell::new(None),
        processes: RefCell::new(lifeline_core::flat::FlatMap::new()),
        heartbeat: RefCell::new(None),
        env: RefCell::new(LiteMap::new_vec()),
        own_env: RefCell::new(Default::default()),
        pumping: Cell::new(false),
        ahead: opfs::Ahead::from_js(workspaces),
    });
    let on_page = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let Some(text) = event.data().as_string() else {
            post_to_page(&RuntimeToPage::Error {
                message: "the page sent a message that is not a JSON string".into(),
            });
            return;
        };
        match lifeline_codec::decode_message::<PageToRuntime>(&text) {
            Ok(PageToRuntime::Start {
                protocol,
                identity,
                workspace,
                env,
                existing_workspace,
                folder,
            }) => {
                if let Err(e) = check_version(protocol) {
                    post_to_page(&RuntimeToPage::Error {
                        message: e.to_string(),
                    });
                    return;
                }
                worker.start(identity, workspace, env, existing_workspace, folder);
            }
            Ok(PageToRuntime::Environment { env }) => worker.set_profile_env(env),
            Ok(PageToRuntime::Dial) => match event.ports().get(0).dyn_into::<MessagePort>() {
                Ok(port) => worker.dial(port),
                Err(_) => post_to_page(&RuntimeToPage::Error {
                    message: "a dial arrived without its port".into(),
                }),
            },
            Err(e) => post_to_page(&RuntimeToPage::Error {
                message: e.to_string(),
            }),
        }
    });
    scope().set_onmessage(Some(on_page.as_ref().unchecked_ref()));
    on_page.forget();
    post_to_page(&RuntimeToPage::Ready {
        protocol: PROTOCOL_VERSION,
    });
}
