// A stub model backend for the end-to-end tests, speaking the real wire
// formats of OpenAI-compatible Chat Completions and Anthropic Messages over
// SSE, so that the app's provider path (request, CORS preflight, streaming,
// tool calls, errors) runs in Chromium without a network or a real model.
//
// Its answers are scripted from the conversation, so a tool-using turn works
// end to end:
//   key `bad-key`                   → HTTP 401 in the provider's error format
//   last message is a tool result   → text `Done: I wrote greeting.txt.`
//   user text has `cut the stream`  → `Partial answer`, then the socket is
//                                     destroyed before the terminator
//   user text has `write a greeting`→ tool call write_file(greeting.txt)
//   user text has `rate limit once` → the first request with that text gets
//                                     HTTP 429 with `Retry-After: 1`, the
//                                     next the hello text
//   user text has `rate limit long` → likewise, with `Retry-After: 30`
//   user text has `end unfinished`  → `Partial answer`, then a clean end of
//                                     the body with no finish reason (no
//                                     `[DONE]`, no `message_stop`)
//   user text has `malformed chunk` → `Partial answer`, then an event whose
//                                     data is not JSON, then the rest
//   user text has `reply in markdown`→ MARKDOWN_TEXT (markdown, a
//                                     javascript: link, raw HTML)
//   anything else                   → text `Hello from the stub model.`
//
// `node e2e/lib/stub-provider.mjs --self-test` checks every route with
// Node's fetch and exits 0 or 1.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access',
  'access-control-max-age': '600',
};

// Requests are small conversations; anything bigger is a bug in the caller.
const MAX_BODY_BYTES = 8 << 20;

export const GREETING_PATH = 'greeting.txt';
export const GREETING_CONTENT = 'hello from the model\n';
export const HELLO_TEXT = 'Hello from the stub model.';
export const DONE_TEXT = 'Done: I wrote greeting.txt.';
export const PARTIAL_TEXT = 'Partial answer';
/** A reply with markdown, a hostile link and raw HTML (`reply in markdown`). */
export const MARKDOWN_TEXT = [
  '## Summary',
  '',
  'Some **bold words** and `inline code`, see [the docs](https://example.com/docs).',
  'A [bad link](javascript:alert(1)) and <img src=x onerror="window.__pwned=1"> stay text.',
  '',
  '- first item',
  '- second item',
  '',
  '```sh',
  'echo copied-from-code',
  '```',
].join('\n');

/**
 * Starts the stub on 127.0.0.1. `requests` fills with `{ path, headers, body }`
 * in arrival order (preflights are not recorded: they carry no body).
 */
export async function startStubProvider({ port = 0, holdCuts = false } = {}) {
  const requests = [];
  // With `holdCuts`, a stream to be cut stops after its partial text and is
  // cut only when the test calls `releaseCuts()`: a barrier, so the test can
  // first see that the client read the partial text.
  const held = [];
  const hold = holdCuts ? () => new Promise((resolve) => held.push(resolve)) : async () => {};
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    handle(req, res, requests, hold).catch((error) => {
      if (!res.headersSent) {
        sendJson(res, 500, { error: { message: String(error), type: 'stub_error' } });
      } else {
        res.destroy();
      }
    });
  });
  // Open streams would keep `close()` waiting; track sockets to end them.
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  const close = () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  const releaseCuts = () => {
    for (const release of held.splice(0)) release();
  };
  /** A profile's fields for this stub: `OpenAI-compatible` unless asked
   * for `Anthropic`. */
  const profile = (name, key, provider = 'OpenAI-compatible') =>
    provider === 'Anthropic'
      ? { name, provider, baseUrl: url, model: 'stub-claude', key }
      : { name, provider, baseUrl: `${url}/v1`, model: 'stub-model', key };
  return { url, requests, close, releaseCuts, profile };
}

async function handle(req, res, requests, hold) {
  res.setHeader('access-control-allow-origin', '*');
  if (req.method === 'OPTIONS') {
    res.writeHead(204, CORS_HEADERS);
    res.end();
    return;
  }
  const path = new URL(req.url, 'http://stub').pathname;
  const format =
    path === '/v1/chat/completions' ? 'openai' : path === '/v1/messages' ? 'anthropic' : null;
  if (req.method !== 'POST' || format === null) {
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'not_found_error' } });
    return;
  }
  const text = await readBody(req);
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    sendJson(res, 400, { error: { message: 'the body is not JSON', type: 'invalid_request_error' } });
    return;
  }
  requests.push({ path, headers: { ...req.headers }, body, at: Date.now() });

  const key = apiKey(req.headers);
  if (key === 'bad-key') {
    if (format === 'openai') {
      sendJson(res, 401, {
        // As OpenAI does, the message echoes the key: the app must redact it.
        error: {
          message: `Incorrect API key provided: ${key}. You can find your API key in your account settings.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
    } else {
      sendJson(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      });
    }
    return;
  }

  const turn = format === 'openai' ? openaiTurn(body) : anthropicTurn(body);
  const limited = ['rate limit once', 'rate limit long'].find((t) => turn.userText.includes(t));
  if (limited) {
    const seen = requests.filter((r) => {
      const t = r.path === '/v1/chat/completions' ? openaiTurn(r.body) : anthropicTurn(r.body);
      return t.userText === turn.userText;
    }).length;
    if (seen === 1) {
      const text = JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } });
      res.writeHead(429, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        'retry-after': limited === 'rate limit once' ? '1' : '30',
        // Without this a cross-origin page cannot read Retry-After.
        'access-control-expose-headers': 'retry-after, date',
      });
      res.end(text);
      return;
    }
  }
  const model = typeof body.model === 'string' ? body.model : 'stub-model';
  const id = requests.length;
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
  });
  const stream = format === 'openai' ? openaiStream : anthropicStream;
  if (turn.afterToolResult) {
    await writeEvents(res, stream.text(model, id, DONE_TEXT));
    res.end();
  } else if (turn.userText.includes('cut the stream')) {
    await writeEvents(res, stream.partial(model, id, PARTIAL_TEXT));
    await hold();
    // No terminator, and no last chunk either: a FIN after the data (not an
    // RST, which may make the client drop what it had received) so the
    // client deterministically sees the partial text, then a cut body.
    res.socket.end();
  } else if (turn.userText.includes('end unfinished')) {
    await writeEvents(res, stream.partial(model, id, PARTIAL_TEXT));
    res.end();
  } else if (turn.userText.includes('malformed chunk')) {
    const broken = format === 'openai' ? 'data: {"choices": [{"delta": \n\n' : 'event: content_block_delta\ndata: {"type": \n\n';
    await writeEvents(res, [...stream.partial(model, id, PARTIAL_TEXT), broken]);
    await writeEvents(res, stream.text(model, id, ' and more').slice(-3));
    res.end();
  } else if (turn.userText.includes('reply in markdown')) {
    await writeEvents(res, stream.text(model, id, MARKDOWN_TEXT));
    res.end();
  } else if (turn.userText.includes('write a greeting')) {
    await writeEvents(res, stream.toolCall(model, id));
    res.end();
  } else {
    await writeEvents(res, stream.text(model, id, HELLO_TEXT));
    res.end();
  }
}

function apiKey(headers) {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
  return bearer ? bearer[1].trim() : headers['x-api-key'] ?? null;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** One `res.write` per SSE event, each in its own turn of the event loop so
 * that they leave as separate TCP writes and the client sees a real stream. */
async function writeEvents(res, events) {
  for (const event of events) {
    if (res.destroyed) return;
    res.write(event);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// ---- reading the conversation ----

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

function openaiTurn(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const lastUser = messages.findLast((message) => message?.role === 'user');
  return {
    afterToolResult: last?.role === 'tool',
    userText: textOf(lastUser?.content),
  };
}

function anthropicTurn(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const blocks = Array.isArray(last?.content) ? last.content : [];
  const afterToolResult =
    last?.role === 'user' && blocks.some((block) => block?.type === 'tool_result');
  const lastUser = messages.findLast(
    (message) =>
      message?.role === 'user' &&
      (typeof message.content === 'string' ||
        (Array.isArray(message.content) && message.content.some((b) => b?.type === 'text'))),
  );
  return { afterToolResult, userText: textOf(lastUser?.content) };
}

// ---- the two wire formats ----

/** Splits text into a few deltas so the client has to assemble it. */
function pieces(text) {
  const words = text.split(/(?<= )/);
  return words.length > 1 ? words : [text];
}

const sse = (value) => `data: ${JSON.stringify(value)}\n\n`;
const named = (event, value) => `event: ${event}\ndata: ${JSON.stringify(value)}\n\n`;

const openaiStream = {
  chunk(model, id, delta, finishReason = null) {
    return sse({
      id: `chatcmpl-stub-${id}`,
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
      usage: null,
    });
  },
  usage(model, id, completion) {
    return sse({
      id: `chatcmpl-stub-${id}`,
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [],
      usage: { prompt_tokens: 42, completion_tokens: completion, total_tokens: 42 + completion },
    });
  },
  text(model, id, text) {
    return [
      this.chunk(model, id, { role: 'assistant', content: '' }),
      ...pieces(text).map((piece) => this.chunk(model, id, { content: piece })),
      this.chunk(model, id, {}, 'stop'),
      this.usage(model, id, pieces(text).length),
      'data: [DONE]\n\n',
    ];
  },
  partial(model, id, text) {
    return [
      this.chunk(model, id, { role: 'assistant', content: '' }),
      ...pieces(text).map((piece) => this.chunk(model, id, { content: piece })),
    ];
  },
  toolCall(model, id) {
    const args = JSON.stringify({ path: GREETING_PATH, content: GREETING_CONTENT });
    const half = Math.floor(args.length / 2);
    const call = (fields) => this.chunk(model, id, { tool_calls: [{ index: 0, ...fields }] });
    return [
      this.chunk(model, id, { role: 'assistant', content: null }),
      call({
        id: `call_stub_${id}`,
        type: 'function',
        function: { name: 'write_file', arguments: '' },
      }),
      call({ function: { arguments: args.slice(0, half) } }),
      call({ function: { arguments: args.slice(half) } }),
      this.chunk(model, id, {}, 'tool_calls'),
      this.usage(model, id, 12),
      'data: [DONE]\n\n',
    ];
  },
};

const anthropicStream = {
  start(model, id) {
    return named('message_start', {
      type: 'message_start',
      message: {
        id: `msg_stub_${id}`,
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 42, output_tokens: 1 },
      },
    });
  },
  textBlock(text) {
    return [
      named('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
      named('ping', { type: 'ping' }),
      ...pieces(text).map((piece) =>
        named('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: piece },
        }),
      ),
    ];
  },
  end(stopReason, outputTokens) {
    return [
      named('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: outputTokens },
      }),
      named('message_stop', { type: 'message_stop' }),
    ];
  },
  text(model, id, text) {
    return [
      this.start(model, id),
      ...this.textBlock(text),
      named('content_block_stop', { type: 'content_block_stop', index: 0 }),
      ...this.end('end_turn', pieces(text).length),
    ];
  },
  partial(model, id, text) {
    return [this.start(model, id), ...this.textBlock(text)];
  },
  toolCall(model, id) {
    const args = JSON.stringify({ path: GREETING_PATH, content: GREETING_CONTENT });
    const half = Math.floor(args.length / 2);
    const delta = (partial_json) =>
      named('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json },
      });
    return [
      this.start(model, id),
      named('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: `toolu_stub_${id}`, name: 'write_file', input: {} },
      }),
      delta(''),
      delta(args.slice(0, half)),
      delta(args.slice(half)),
      named('content_block_stop', { type: 'content_block_stop', index: 0 }),
      ...this.end('tool_use', 12),
    ];
  },
};

// ---- self-test ----

/** Reads a body to its end or its cut; `cut` says which. */
async function readStream(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, cut: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, cut: true };
  }
}

function parseSse(text) {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = { event: 'message', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event.event = line.slice(7);
        if (line.startsWith('data: ')) event.data = line.slice(6);
      }
      return event;
    });
}

/** What a client would assemble from the stream: text, tool calls, the end. */
function assemble(format, text) {
  const out = { text: '', calls: [], finished: false };
  for (const { event, data } of parseSse(text)) {
    if (format === 'openai') {
      if (data === '[DONE]') {
        out.finished = true;
        continue;
      }
      const delta = JSON.parse(data).choices[0]?.delta ?? {};
      if (typeof delta.content === 'string') out.text += delta.content;
      for (const call of delta.tool_calls ?? []) {
        out.calls[call.index] ??= { id: '', name: '', args: '' };
        const slot = out.calls[call.index];
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        slot.args += call.function?.arguments ?? '';
      }
    } else {
      const value = JSON.parse(data);
      if (event === 'message_stop') out.finished = true;
      if (event === 'content_block_start' && value.content_block.type === 'tool_use') {
        out.calls[value.index] = { id: value.content_block.id, name: value.content_block.name, args: '' };
      }
      if (event === 'content_block_delta' && value.delta.type === 'text_delta') out.text += value.delta.text;
      if (event === 'content_block_delta' && value.delta.type === 'input_json_delta') {
        out.calls[value.index].args += value.delta.partial_json;
      }
    }
  }
  out.calls = out.calls.filter(Boolean).map((call) => ({ ...call, args: JSON.parse(call.args) }));
  return out;
}

async function selfTest() {
  const stub = await startStubProvider();
  const failures = [];
  const check = (condition, what) => {
    if (!condition) failures.push(what);
    console.log(`${condition ? 'ok' : 'FAILED'} - ${what}`);
  };
  try {
    const preflight = await fetch(`${stub.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:8080',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, anthropic-version, content-type',
      },
    });
    check(preflight.status === 204, 'preflight answers 204');
    check(preflight.headers.get('access-control-allow-origin') === '*', 'preflight allows any origin');
    check(
      preflight.headers.get('access-control-allow-headers')?.includes('anthropic-dangerous-direct-browser-access'),
      'preflight allows the Anthropic browser header',
    );

    const routes = {
      openai: {
        path: '/v1/chat/completions',
        headers: (key) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` }),
        user: (text) => ({ role: 'user', content: text }),
        toolResult: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write_file', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
      },
      anthropic: {
        path: '/v1/messages',
        headers: (key) => ({
          'content-type': 'application/json',
          'x-api-key': key,
          'anthropic-version': '2023-06-01',
        }),
        user: (text) => ({ role: 'user', content: [{ type: 'text', text }] }),
        toolResult: [
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 't1', name: 'write_file', input: {} }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
        ],
      },
    };

    for (const [format, route] of Object.entries(routes)) {
      const post = (messages, key = 'good-key') =>
        fetch(stub.url + route.path, {
          method: 'POST',
          headers: route.headers(key),
          body: JSON.stringify({ model: 'stub', stream: true, max_tokens: 64, messages }),
        });

      let response = await post([route.user('hi')]);
      check(response.headers.get('content-type') === 'text/event-stream', `${format}: streams SSE`);
      check(response.headers.get('access-control-allow-origin') === '*', `${format}: CORS on the response`);
      let body = await readStream(response);
      let reply = assemble(format, body.text);
      check(reply.text === HELLO_TEXT && reply.finished, `${format}: plain text reply`);

      body = await readStream(await post([route.user('please write a greeting')]));
      reply = assemble(format, body.text);
      check(
        reply.finished &&
          reply.calls.length === 1 &&
          reply.calls[0].name === 'write_file' &&
          reply.calls[0].args.path === GREETING_PATH &&
          reply.calls[0].args.content === GREETING_CONTENT,
        `${format}: write_file tool call`,
      );

      body = await readStream(await post([route.user('please write a greeting'), ...route.toolResult]));
      reply = assemble(format, body.text);
      check(reply.text === DONE_TEXT && reply.finished, `${format}: text after the tool result`);

      body = await readStream(await post([route.user('now cut the stream')]));
      check(body.cut && body.text.includes('Partial') && !assemble(format, body.text).finished, `${format}: cut stream`);

      body = await readStream(await post([route.user('now end unfinished')]));
      check(
        !body.cut && body.text.includes('Partial') && !assemble(format, body.text).finished,
        `${format}: a clean end without a finish reason`,
      );

      body = await readStream(await post([route.user('send a malformed chunk')]));
      check(!body.cut && /data: \{"[^\n]*: \n\n/.test(body.text), `${format}: a chunk that is not JSON`);

      response = await post([route.user('hi')], 'bad-key');
      const error = await response.json();
      check(
        response.status === 401 && typeof error.error?.message === 'string',
        `${format}: bad key is a 401 with an error message`,
      );
    }

    check(stub.requests.length === 14, 'every POST is recorded');
    check(
      stub.requests[0].path === '/v1/chat/completions' && stub.requests[13].path === '/v1/messages',
      'requests are recorded in arrival order',
    );
    check(stub.requests[7].headers['x-api-key'] === 'good-key', 'headers are recorded');
    check(stub.requests[0].body.model === 'stub', 'bodies are recorded parsed');
  } catch (error) {
    failures.push(String(error?.stack ?? error));
    console.log(`FAILED - ${error?.stack ?? error}`);
  } finally {
    await stub.close();
  }
  console.log(failures.length === 0 ? 'stub provider self-test passed' : `${failures.length} check(s) failed`);
  return failures.length === 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--self-test')) {
  process.exit((await selfTest()) ? 0 : 1);
}
