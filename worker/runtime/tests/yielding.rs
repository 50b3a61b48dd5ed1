//! `Host::yield_now` on the OPFS workspace, the turn a running command gives
//! the runtime worker after every 64 KiB of output: it must let what is
//! already queued run (the controller's acknowledgements, a kill) and resume
//! every waiter, in order.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use lifeline_runtime::opfs::OpfsWorkspace;
use lifeline_shell::Host;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

async fn workspace(label: &str) -> OpfsWorkspace {
    let id = format!("test-yield-{label}-{}", js_sys::Math::random().to_bits());
    OpfsWorkspace::open(&id).await.unwrap()
}

#[wasm_bindgen_test]
async fn a_message_already_queued_is_handled_before_the_command_resumes() {
    let host = workspace("queued").await;
    let channel = web_sys::MessageChannel::new().unwrap();
    let handled = Rc::new(Cell::new(false));
    let seen = handled.clone();
    let on_message = Closure::<dyn FnMut()>::new(move || seen.set(true));
    channel
        .port1()
        .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    channel.port2().post_message(&JsValue::UNDEFINED).unwrap();
    assert!(!handled.get(), "a message is a task of its own");
    host.yield_now().await;
    assert!(
        handled.get(),
        "the queued message ran before the resumption"
    );
}

#[wasm_bindgen_test]
async fn every_waiter_resumes_in_the_order_it_yielded() {
    let host = Rc::new(workspace("order").await);
    let order = Rc::new(RefCell::new(Vec::new()));
    let waiters = (0..64).map(|i| {
        let (host, order) = (host.clone(), order.clone());
        async move {
            host.yield_now().await;
            order.borrow_mut().push(i);
        }
    });
    futures_join_all(waiters).await;
    assert_eq!(*order.borrow(), (0..64).collect::<Vec<_>>());
}

/// Runs the futures concurrently on this worker and waits for all of them.
async fn futures_join_all<F: std::future::Future<Output = ()> + 'static>(
    futures: impl Iterator<Item = F>,
) {
    let left = Rc::new(Cell::new(0usize));
    let (done, finished) = {
        let mut resolve_slot = None;
        let promise = js_sys::Promise::new(&mut |resolve, _| resolve_slot = Some(resolve));
        (resolve_slot.unwrap(), promise)
    };
    let done = Rc::new(done);
    for future in futures {
        left.set(left.get() + 1);
        let (left, done) = (left.clone(), done.clone());
        wasm_bindgen_futures::spawn_local(async move {
            future.await;
            left.set(left.get() - 1);
            if left.get() == 0 {
                let _ = done.call0(&JsValue::UNDEFINED);
            }
        });
    }
    wasm_bindgen_futures::JsFuture::from(finished)
        .await
        .unwrap();
}
