//! The Web Lock this worker holds for its whole life
//! ([`lifeline_protocol::runtime_life_lock`]): the browser releases it when
//! the worker ends, however it ends, and the controller waiting for it then
//! knows the runtime is gone, even in browsers whose `MessagePort` has no
//! `close` event. A busy loop keeps it, so busy is never taken for dead.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::JsFuture;

/// Resolves once this worker holds `name`; it is never given back.
pub async fn hold(name: &str) -> Result<(), String> {
    let navigator = Reflect::get(&crate::scope(), &"navigator".into())
        .map_err(|_| "no navigator".to_string())?;
    let locks = Reflect::get(&navigator, &"locks".into()).map_err(|_| "no Web Locks")?;
    if locks.is_undefined() || locks.is_null() {
        return Err("no Web Locks".into());
    }
    let request: Function = Reflect::get(&locks, &"request".into())
        .map_err(|_| "no navigator.locks.request")?
        .dyn_into()
        .map_err(|_| "navigator.locks.request is not a function".to_string())?;
    let mut granted_resolve: Option<Function> = None;
    let granted = Promise::new(&mut |resolve, _| granted_resolve = Some(resolve));
    let granted_resolve = granted_resolve.ok_or("promise executor did not run")?;
    let on_grant = Closure::<dyn FnMut(JsValue) -> JsValue>::new(move |_lock: JsValue| {
        let _ = granted_resolve.call0(&JsValue::NULL);
        // Never settles: held until the worker is gone.
        JsValue::from(Promise::new(&mut |_, _| {}))
    })
    .into_js_value();
    let pending: Promise = request
        .call2(&locks, &JsValue::from_str(name), &on_grant)
        .map_err(|_| format!("requesting the lock {name} failed"))?
        .dyn_into()
        .map_err(|_| "navigator.locks.request returned no promise".to_string())?;
    // Settles only if the request fails; keep that from going unhandled.
    let on_reject = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
    let _ = pending.catch(&on_reject);
    on_reject.forget();
    JsFuture::from(granted)
        .await
        .map(|_| ())
        .map_err(|_| format!("the lock {name} was not granted"))
}
