//! Running a local GGUF model for a recorded request: the same lifecycle as
//! a remote provider (the engine journals the request before this runs and
//! never resends it once uncertain); only the carrying-out differs. The
//! prompt is written and the generated text read back in Rust
//! (`lifeline_provider::local`); `web/static/local-model.js` runs llama.cpp
//! through wllama and streams its text here.

use js_sys::{Function, Object, Promise, Reflect};
use lifeline_core::model::ModelMessage;
use lifeline_core::profile::{LocalFile, Sampling, Tool};
use lifeline_engine::failure::{local_failed, unsent, Unsent};
use lifeline_engine::ProviderReply;
use lifeline_provider::local::{chatml_prompt, ToolCallParser};
use lifeline_provider::StopReason;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, ReadableStream, ReadableStreamDefaultReader};

use crate::remote::{conversation, tool_names, Failure};

/// `local-model.js`, imported on first use through the function
/// `provider.js` leaves on the global scope.
pub async fn module() -> Result<JsValue, JsValue> {
    let import: Function =
        Reflect::get(&js_sys::global(), &"lifelineLocalModel".into())?.dyn_into()?;
    let promise: Promise = import.call0(&JsValue::UNDEFINED)?.dyn_into()?;
    JsFuture::from(promise).await
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn set(o: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), value);
}

#[allow(clippy::too_many_arguments)]
pub async fn send(
    file: &LocalFile,
    sampling: &Sampling,
    messages: &[ModelMessage],
    tools: &lifeline_core::flat::FlatSet<Tool>,
    abort: &AbortController,
    mut on_bytes: impl FnMut(),
    mut on_text: impl FnMut(&str),
    mut on_load: impl FnMut(Load),
) -> Result<ProviderReply, Failure> {
    let prompt = chatml_prompt(&conversation(messages), &tool_names(tools));
    let broken = |e: JsValue| {
        let (name, message) = thrown(&e);
        unsent(Unsent::LocalNotStarted { name, message })
    };
    let module = module().await.map_err(broken)?;
    let generate: Function = get(&module, "generate").dyn_into().map_err(broken)?;
    let request = Object::new();
    set(&request, "storedAs", &file.stored_as.as_str().into());
    set(&request, "contextTokens", &sampling.context_tokens.into());
    set(&request, "prompt", &prompt.as_str().into());
    set(&request, "maxTokens", &sampling.max_tokens.into());
    set(
        &request,
        "temperature",
        &(sampling.temperature_percent as f64 / 100.0).into(),
    );
    set(
        &request,
        "topP",
        &(sampling.top_p_percent as f64 / 100.0).into(),
    );
    set(&request, "signal", &abort.signal());
    let stream: ReadableStream = generate
        .call1(&module, &request)
        .and_then(|s| s.dyn_into().map_err(JsValue::from))
        .map_err(broken)?;
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    // Ids name the request's position in the session, so they stay unique
    // across its turns.
    let mut parser = ToolCallParser::new(&format!("local-{}-", messages.len()));
    let mut loaded = false;
    let mut summary = JsValue::UNDEFINED;
    loop {
        let chunk = match JsFuture::from(reader.read()).await {
            Ok(c) => c,
            Err(e) => return Err(fail(&e, parser.text_so_far(), loaded)),
        };
        if get(&chunk, "done").as_bool().unwrap_or(true) {
            break;
        }
        let value = get(&chunk, "value");
        if let Some(text) = value.as_string() {
            on_bytes();
            let shown = parser.push(&text);
            if !shown.is_empty() {
                on_text(&shown);
            }
        } else if get(&value, "loaded").is_truthy() {
            loaded = true;
            on_load(Load::Loaded);
        } else if let (Some(read), Some(total)) =
            (get(&value, "read").as_f64(), get(&value, "total").as_f64())
        {
            on_load(Load::Progress {
                read: read as u64,
                total: total as u64,
            });
        } else {
            on_bytes();
            summary = value;
        }
    }
    let at_limit = get(&summary, "finish").as_string().as_deref() == Some("length");
    let reply = parser.finish(at_limit);
    let count = |key: &str| get(&summary, key).as_f64().unwrap_or(0.0) as u64;
    Ok(ProviderReply {
        text: reply.text,
        tool_calls: reply
            .tool_calls
            .iter()
            .map(|c| lifeline_core::journal::ToolCallRecord {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.to_string(),
            })
            .collect(),
        stop: match reply.stop {
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            _ => "end_turn",
        }
        .into(),
        input_tokens: count("promptTokens"),
        output_tokens: count("outputTokens"),
    })
}

/// How a local model's load goes, for the engine's load bound and the
/// page's progress.
pub enum Load {
    /// `read` of the model file's `total` bytes have reached llama.cpp.
    Progress {
        read: u64,
        total: u64,
    },
    Loaded,
}

/// What a thrown error was called and said.
fn thrown(e: &JsValue) -> (String, String) {
    let name = get(e, "name").as_string().unwrap_or_default();
    let message = get(e, "message")
        .as_string()
        .or_else(|| e.as_string())
        .unwrap_or_default();
    (name, message)
}

/// What the engine hears of a failure: the error as thrown, the text so
/// far and whether the model had loaded (`failure::local_failed` decides
/// what that means).
fn fail(e: &JsValue, partial: &str, loaded: bool) -> Failure {
    let (name, message) = thrown(e);
    local_failed(&name, &message, partial, loaded)
}
