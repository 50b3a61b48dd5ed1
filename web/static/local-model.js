// Local GGUF models for the controller worker, through llama.cpp compiled to
// WebAssembly (@wllama/wllama, copied into dist/wllama/ by `cargo xtask
// build`: served from this origin, never a CDN). The controller imports
// this module only when a local profile is used, and this module imports
// wllama only when a model runs, so no other visit pays for either.
//
// The decisions (prompt format, tool-call parsing, error classes) are the
// controller's, in Rust; this only moves files and text.

const MODELS = 'models';
/** The service worker's cache for the engine (`cargo xtask build` names it
 * after the engine files' hash): filled here, read by `sw.js` offline. */
const ENGINE = '__LIFELINE_ENGINE__';
const ENGINE_FILES = ['./wllama/index.js', './wllama/wllama.wasm'];

/** Keeps the engine for offline starts once a local model is used: the
 * page's precache leaves it out so no other visit downloads it. Done here,
 * not by the service worker when it sees the fetch, because a worker
 * started before the service worker took over the page fetches past it. */
async function keepEngine() {
  if (typeof caches === 'undefined') return;
  const cache = await caches.open(ENGINE);
  const urls = ENGINE_FILES.map((file) => new URL(file, import.meta.url).href);
  const missing = [];
  for (const url of urls) if (!(await cache.match(url))) missing.push(url);
  if (missing.length) await cache.addAll(missing);
}

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
  // A local profile now exists: keep the engine for its offline starts.
  await keepEngine().catch(() => {});
}

/** The first `length` bytes of a file, for its GGUF header. */
export async function head(file, length) {
  return new Uint8Array(await file.slice(0, length).arrayBuffer());
}

/** The loaded model for `storedAs` at `contextTokens`, loading it if need
 * be. `progress(read, total)` hears how much of the file llama.cpp has
 * read; `signal` tears a load down at once (wllama's exit() ends its
 * worker), so a stopped load leaves nothing running. */
async function load(storedAs, contextTokens, progress, signal) {
  const key = `${storedAs}\n${contextTokens}`;
  if (current?.key === key) return current.wllama;
  if (current) {
    const old = current;
    current = null;
    await old.wllama.exit().catch(() => {});
  }
  const file = await (await (await modelFolder(false)).getFileHandle(storedAs)).getFile();
  const total = file.size;
  progress(0, total);
  counted(file, (read) => progress(read, total));
  // Offline with the engine not yet kept, the import below fails clearly.
  await keepEngine().catch(() => {});
  signal.throwIfAborted();
  const { Wllama } = await import('./wllama/index.js');
  signal.throwIfAborted();
  const wasm = new URL('./wllama/wllama.wasm', import.meta.url).href;
  const wllama = new Wllama({ default: wasm }, { suppressNativeLog: true, logger: quiet });
  const cancel = () => wllama.exit().catch(() => {});
  signal.addEventListener('abort', cancel, { once: true });
  try {
    // One thread: on small machines more were slower, and threads need
    // cross-origin isolation this app does not ask for.
    await wllama.loadModel([file], { n_ctx: contextTokens, n_threads: 1 });
  } finally {
    signal.removeEventListener('abort', cancel);
  }
  signal.throwIfAborted();
  current = { key, wllama };
  return wllama;
}

/** Reports the bytes llama.cpp reads from `file`: it reads through
 * `slice()` (or `stream()` where the browser lacks JSPI), never through a
 * copy, so the count is the load's own progress. */
function counted(file, report) {
  let read = 0;
  const add = (n) => report((read = Math.min(file.size, read + n)));
  const slice = file.slice.bind(file);
  file.slice = (...args) => {
    const part = slice(...args);
    const whole = part.arrayBuffer.bind(part);
    part.arrayBuffer = async () => {
      const buffer = await whole();
      add(buffer.byteLength);
      return buffer;
    };
    return part;
  };
  const stream = file.stream.bind(file);
  file.stream = () =>
    stream().pipeThrough(
      new TransformStream({
        transform(chunk, out) {
          add(chunk.byteLength);
          out.enqueue(chunk);
        },
      }),
    );
}

/** `promise`, or an AbortError as soon as `signal` aborts: a load that
 * cannot be interrupted at once (the engine's download) does not hold
 * the turn. */
function unlessAborted(promise, signal) {
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

const quiet = { debug() {}, log() {}, warn() {}, error() {} };

/** Runs one completion. Returns a stream whose chunks are, in order:
 * `{ read, total }` as the model file loads (none when it is loaded
 * already), the object `{ loaded: true }` once the model is ready, each
 * text delta as a string, and `{ finish, promptTokens, outputTokens }`
 * last. A failure errors the stream with llama.cpp's or wllama's own
 * error. */
export function generate(request) {
  const { storedAs, contextTokens, prompt, maxTokens, temperature, topP, signal } = request;
  return new ReadableStream({
    async start(out) {
      try {
        const progress = (read, total) => {
          // After an abort the stream is closed; late reports go nowhere.
          if (!signal.aborted) out.enqueue({ read, total });
        };
        const wllama = await unlessAborted(load(storedAs, contextTokens, progress, signal), signal);
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
