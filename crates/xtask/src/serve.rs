//! Serves the bundle with the headers the app relies on: a strict
//! Content-Security-Policy, `application/wasm` for modules, and `no-cache` so
//! the browser always revalidates (the service worker, not the HTTP cache,
//! decides what runs offline).

use crate::{dist, tools};
use axum::{
    extract::Request,
    http::{header, HeaderValue},
    middleware::{self, Next},
    response::Response,
    Router,
};
use std::{net::SocketAddr, path::Path, time::Duration};
use tower_http::{services::ServeDir, set_header::SetResponseHeaderLayer};

/// `'wasm-unsafe-eval'` lets the page and workers compile wasm without
/// allowing JavaScript eval; workers are module scripts from this origin.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self'; \
img-src 'self' data:; style-src 'self'; manifest-src 'self'; object-src 'none'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The runtime worker's own policy: the one context where the `js` command
/// (gated by the profile's capabilities) may evaluate JavaScript. A module
/// worker takes its policy from its script's response, so the page, the
/// controller and the service worker keep the strict one.
pub const RUNTIME_CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'; connect-src 'self'; object-src 'none'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The provider worker's policy: it alone calls model providers, at base
/// URLs the user enters in a profile (a local Ollama on http://localhost, a
/// LAN server, a hosted API), so it alone may connect beyond this origin.
/// The controller, which starts it, keeps the strict policy: the journal's
/// writer cannot reach another origin.
///
/// `worker-src blob:`: wllama (local models) starts llama.cpp's worker from
/// a `blob:` URL its own script makes; only code already running in the
/// provider worker can make one.
pub const PROVIDER_CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; \
connect-src 'self' https: http:; object-src 'none'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The policy a response for `path` carries: a module worker takes its
/// policy from its own script's response.
fn policy_for(path: &str) -> &'static str {
    if path.ends_with("/runtime.js") {
        RUNTIME_CONTENT_SECURITY_POLICY
    } else if path.ends_with("/provider.js") {
        PROVIDER_CONTENT_SECURITY_POLICY
    } else {
        CONTENT_SECURITY_POLICY
    }
}

async fn content_security_policy(request: Request, next: Next) -> Response {
    let policy = policy_for(request.uri().path());
    let mut response = next.run(request).await;
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy),
    );
    response
}

pub fn router(dir: &Path) -> Router {
    Router::new()
        .fallback_service(ServeDir::new(dir).append_index_html_on_directories(true))
        .layer(middleware::from_fn(content_security_policy))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut port = 8080u16;
    let mut profile = dist::Profile::Release;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|value| value.parse().ok())
                    .ok_or("--port needs a number between 1 and 65535")?;
            }
            "--dev" => profile = dist::Profile::Dev,
            other => return Err(format!("unexpected argument {other:?} for serve")),
        }
    }
    tools::ensure_build_tools()?;
    let bundle = dist::build(profile)?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
        println!("Serving Lifeline at http://127.0.0.1:{port}/ (Ctrl-C to stop)");
        axum::serve(listener, router(&bundle.dir))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| e.to_string())
    })
}

/// Serves `dir` on an ephemeral loopback port from a background thread, for
/// the end-to-end tests. The server lives until the process exits.
pub fn spawn(dir: &Path) -> Result<SocketAddr, String> {
    spawn_with_latency(dir, Duration::ZERO)
}

/// [`spawn`], each response held back by `latency`: the round trip of a
/// real network, which loopback does not have, so that the bench sees
/// what a chain of requests, each asked for only once the one before has
/// arrived, costs a visitor.
pub fn spawn_with_latency(dir: &Path, latency: Duration) -> Result<SocketAddr, String> {
    let app = router(dir);
    let app = if latency.is_zero() {
        app
    } else {
        app.layer(middleware::from_fn(
            move |request: Request, next: Next| async move {
                tokio::time::sleep(latency).await;
                next.run(request).await
            },
        ))
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = match tokio::runtime::Runtime::new() {
            Ok(runtime) => runtime,
            Err(error) => return sender.send(Err(error.to_string())),
        };
        runtime.block_on(async move {
            let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
                Ok(listener) => listener,
                Err(error) => return sender.send(Err(error.to_string())),
            };
            let address = listener.local_addr().map_err(|e| e.to_string());
            let _ = sender.send(address);
            let _ = axum::serve(listener, app).await;
            Ok(())
        })
    });
    receiver
        .recv()
        .map_err(|_| "the test server thread stopped before listening".to_owned())?
}

#[cfg(test)]
mod tests {
    use super::policy_for;

    /// Architecture Invariant (docs/ARCHITECTURE.md): only the provider
    /// worker may connect beyond the origin; the page, the controller (the
    /// journal's writer), the runtimes and the service worker stay on
    /// `connect-src 'self'`.
    #[test]
    fn only_the_provider_worker_connects_beyond_the_origin() {
        let connect = |path: &str| {
            policy_for(path)
                .split(';')
                .map(str::trim)
                .find(|d| d.starts_with("connect-src"))
                .unwrap_or("none")
                .to_owned()
        };
        for path in [
            "/",
            "/index.html",
            "/controller.js",
            "/runtime.js",
            "/sw.js",
            "/boot.js",
        ] {
            assert_eq!(connect(path), "connect-src 'self'", "{path}");
        }
        assert_eq!(connect("/provider.js"), "connect-src 'self' https: http:");
    }
}
