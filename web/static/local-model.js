// Local GGUF models for the controller worker, through llama.cpp compiled to
// WebAssembly (@wllama/wllama, copied into dist/wllama/ by `cargo xtask
// build`: served from this origin, never a CDN). The controller imports
// this module only when a local profile is used, and this module imports
// wllama only when a model runs, so no other visit pays for either.
//
// The decisions (prompt format, tool-call parsing, error classes) are the
// controller's, in Rust; this only moves files and text.

const MODELS = 'models';

/** The model currently loaded, kept between turns: loading is the slow part. */
let current = null;

async function modelFolder(create) {
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(MODELS, { create });
}

/** Copies a picked file into the origin's private file system as `storedAs`,
 * so the profile works after a reload and offline. */
export async function importModel(file, storedAs) {
  const folder = await modelFolder(true);
  const handle = await folder.getFileHandle(storedAs, { create: true });
  const writable = await handle.createWritable();
  await file.stream().pipeTo(writable);
}

/** The first `length` bytes of a file, for its GGUF header. */
export async function head(file, length) {
  return new Uint8Array(await file.slice(0, length).arrayBuffer());
}

async function load(storedAs, contextTokens) {
  const key = `${storedAs}\n${contextTokens}`;
  if (current?.key === key) return current.wllama;
  if (current) {
    const old = current;
    current = null;
    await old.wllama.exit().catch(() => {});
  }
  const { Wllama } = await import('./wllama/index.js');
  const wasm = new URL('./wllama/wllama.wasm', import.meta.url).href;
  const wllama = new Wllama({ default: wasm }, { suppressNativeLog: true, logger: quiet });
  const file = await (await (await modelFolder(false)).getFileHandle(storedAs)).getFile();
  // One thread: on small machines more were slower, and threads need
  // cross-origin isolation this app does not ask for.
  await wllama.loadModel([file], { n_ctx: contextTokens, n_threads: 1 });
  current = { key, wllama };
  return wllama;
}

const quiet = { debug() {}, log() {}, warn() {}, error() {} };

/** Runs one completion. Returns a stream whose chunks are, in order: the
 * object `{ loaded: true }` once the model is ready, each text delta as a
 * string, and `{ finish, promptTokens, outputTokens }` last. A failure
 * errors the stream with llama.cpp's or wllama's own error. */
export function generate(request) {
  const { storedAs, contextTokens, prompt, maxTokens, temperature, topP, signal } = request;
  return new ReadableStream({
    async start(out) {
      try {
        const wllama = await load(storedAs, contextTokens);
        signal.throwIfAborted();
        out.enqueue({ loaded: true });
        let finish = null;
        let usage = null;
        await wllama.createCompletion({
          prompt,
          stream: true,
          max_tokens: maxTokens,
          temperature,
          top_p: topP,
          abortSignal: signal,
          onData(chunk) {
            const choice = chunk.choices?.[0];
            if (choice?.text) out.enqueue(choice.text);
            if (choice?.finish_reason) finish = choice.finish_reason;
            if (chunk.usage) usage = chunk.usage;
          },
        });
        out.enqueue({
          finish,
          promptTokens: usage?.prompt_tokens ?? 0,
          outputTokens: usage?.completion_tokens ?? 0,
        });
        out.close();
      } catch (error) {
        // A failed run may leave llama.cpp's state broken: load afresh next
        // time. Stop leaves it usable.
        if (error?.name !== 'AbortError' && current) {
          const old = current;
          current = null;
          old.wllama.exit().catch(() => {});
        }
        out.error(error);
      }
    },
  });
}
