// A maintained third-party mock model server, @copilotkit/aimock (pinned in
// e2e/package.json, installed by `cargo xtask test` with `npm ci`, nothing
// fetched at run time), started in-process on a free port: it speaks both
// wire formats (Chat Completions, Anthropic Messages) from scripted
// fixtures and injects faults (error statuses with Retry-After, a
// connection dropped before or during the reply, chunk delays). Its request
// journal is what "the server received" means in the tests.
//
// aimock's CORS answer does not let this app's page in, so a small proxy
// stands in front of it and only adds what a browser needs:
// - `Access-Control-Allow-Headers: *` does not cover `Authorization` (the
//   Fetch standard excludes it from the wildcard), so the OpenAI-compatible
//   preflight would fail: the proxy answers preflights itself, naming the
//   headers;
// - `Retry-After` and `Date` are not exposed to a cross-origin page, so the
//   app could not honour the wait: the proxy exposes them.
// Everything else passes through byte for byte, and a connection aimock
// drops is dropped towards the page too (before or after the headers).
// Every answer closes its connection: Chromium silently sends a request
// again when a *reused* keep-alive connection closes before any response
// byte, so a drop before the first byte would reach the app only on a fresh
// connection (the browser's resend would hide it, and aimock would count
// two requests for the app's one attempt).
import http from 'node:http';
import { LLMock } from '@copilotkit/aimock';

const PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access',
  'access-control-max-age': '600',
  connection: 'close',
};

/** Starts aimock and its CORS proxy on 127.0.0.1. Script replies on `mock`
 * (an `LLMock`); `requests()` is aimock's journal of model requests. */
export async function startAimock() {
  const mock = new LLMock({ port: 0, host: '127.0.0.1' });
  const upstream = new URL(await mock.start());
  const sockets = new Set();
  const proxy = http.createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, PREFLIGHT);
      res.end();
      return;
    }
    const headers = { ...req.headers, host: upstream.host };
    const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers });
    out.on('response', (answer) => {
      const passed = { ...answer.headers };
      delete passed['access-control-expose-headers'];
      res.writeHead(answer.statusCode ?? 502, {
        ...passed,
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'retry-after, date, x-request-id',
        connection: 'close',
      });
      // Each piece goes on as it comes, so the page sees aimock's timing.
      answer.on('data', (chunk) => res.write(chunk));
      answer.on('end', () => res.end());
      // aimock destroyed the stream mid-reply: so does the proxy.
      answer.on('close', () => {
        if (!answer.complete) res.destroy();
      });
    });
    // aimock dropped the connection before any response byte.
    out.on('error', () => res.destroy());
    // The page aborted (Stop): aimock's side ends as well.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  });
  proxy.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', () => {
      proxy.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${proxy.address().port}`;
  return {
    url,
    mock,
    /** The model requests aimock received, in order: `{ path, body,
     * timestamp, response: { status, interruptReason? } }`. */
    requests: () => mock.getRequests().filter((r) => r.method === 'POST'),
    /** A profile's fields: `OpenAI-compatible` unless asked for `Anthropic`. */
    profile: (name, key, provider = 'OpenAI-compatible') =>
      provider === 'Anthropic'
        ? { name, provider, baseUrl: url, model: 'claude-sonnet-4-5', key }
        : { name, provider, baseUrl: `${url}/v1`, model: 'gpt-4o', key },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(() => resolve()));
      await mock.stop();
    },
  };
}
