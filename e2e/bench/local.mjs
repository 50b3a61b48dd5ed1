// The local model's figures for `cargo xtask bench` (BENCH_ONLY=local,threads).
//
// `local`: the app itself, in a fresh browser profile per round, answers the
// same prompt through the project's stub server (an OpenAI-compatible
// profile) and then through a local GGUF profile (the tiny scripted model of
// e2e/lib/tiny_gguf.py, so the answer is known). Times are taken in the page
// by a MutationObserver: the load is the life of the "loading the local
// model" notice, the first token is the first five characters of the answer
// on screen, tokens per second are the answer's characters (one token each in
// that model's character-level vocabulary) over the time from the first to
// the last. Added memory is the browser's resident memory (every process of
// the profile, from /proc) after the local answer minus before it.
//
// `threads`: wllama alone on a page of the app's origin, once as the app is
// served and once cross-origin isolated (COOP/COEP, which SharedArrayBuffer
// and so llama.cpp's threads need), with the 'loop' model generating 200
// tokens on 1 and 2 threads.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBrowser, VIEWPORTS } from '../lib/browser.mjs';
import { addProfile, send, transcript } from '../lib/ui.mjs';
import { HELLO_TEXT, startStubProvider } from '../lib/stub-provider.mjs';
import { rssKb } from './procs.mjs';
import { fmt, median, table } from './table.mjs';

const APP = process.env.LIFELINE_APP_URL;
const ANSWER = 'Hello from a tiny local model.';


/** Makes the scripted models in a temporary folder. */
async function models(scripts) {
  const python = process.env.LIFELINE_GGUF_PYTHON;
  if (!python) throw new Error('LIFELINE_GGUF_PYTHON is not set (run this through cargo xtask bench)');
  const dir = await mkdtemp(join(tmpdir(), 'lifeline-bench-gguf-'));
  const paths = {};
  for (const script of scripts) {
    paths[script] = join(dir, `${script}.gguf`);
    execFileSync(python, ['lib/tiny_gguf.py', script, paths[script]]);
  }
  return { dir, paths };
}

// Page-side marks, reset per turn: the first time each condition held.
const PROBE = () => {
  window.__marks = {};
  // Earlier turns' answers stay on screen: a mark is a new occurrence.
  const count = (text, part) => text.split(part).length - 1;
  window.__watch = (answer) => {
    const marks = (window.__marks = { sent: performance.now() });
    const start = document.body.textContent;
    const [firstBefore, doneBefore] = [count(start, answer.slice(0, 5)), count(start, answer)];
    const check = () => {
      const now = performance.now();
      const text = document.body.textContent;
      const loading = text.includes('loading the local model');
      if (loading && marks.loadStart === undefined) marks.loadStart = now;
      if (!loading && marks.loadStart !== undefined && marks.loadEnd === undefined) marks.loadEnd = now;
      if (marks.first === undefined && count(text, answer.slice(0, 5)) > firstBefore) marks.first = now;
      if (marks.done === undefined && count(text, answer) > doneBefore) marks.done = now;
    };
    window.__observer?.disconnect();
    window.__observer = new MutationObserver(check);
    window.__observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  };
};

async function turn(page, prompt, answer) {
  await page.evaluate((a) => window.__watch(a), answer);
  await send(page, prompt);
  await page.waitForFunction(() => window.__marks.done !== undefined, null, { timeout: 120_000 });
  await transcript(page).getByText(answer).last().waitFor();
  const m = await page.evaluate(() => window.__marks);
  return {
    load: m.loadStart === undefined ? 0 : (m.loadEnd ?? m.first) - m.loadStart,
    first: m.first - m.sent,
    tokensPerSecond: (answer.length - 5) / ((m.done - m.first) / 1000),
  };
}

async function useLocal(page, name, file) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = page.getByRole('dialog', { name: 'Profiles' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: 'Local model (GGUF file)' });
  await dialog.getByLabel('Model file', { exact: true }).setInputFiles(file);
  await dialog.getByText(/llama, [\d,]+ parameters/).waitFor({ timeout: 60_000 });
  for (const tool of ['read_file', 'write_file', 'list_files', 'run_command']) {
    await dialog.getByLabel(tool, { exact: true }).uncheck();
  }
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: name });
  await item.getByRole('button', { name: 'Use for this session' }).click();
  await item.getByText('(selected)').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('status').filter({ hasText: /^Connected$/ }).waitFor({ timeout: 60_000 });
}

export async function localGroup(rounds) {
  if (!APP) throw new Error('LIFELINE_APP_URL is not set (run this through cargo xtask bench)');
  const { dir, paths } = await models(['answer']);
  const stub = await startStubProvider();
  const runs = { stub: [], local: [], localAgain: [], memoryKb: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      const browser = await openBrowser(VIEWPORTS.desktop);
      try {
        const { page } = browser;
        await page.addInitScript(PROBE);
        await page.goto(APP);
        await page.getByRole('status').filter({ hasText: /^Connected$/ }).waitFor({ timeout: 120_000 });
        await addProfile(page, stub.profile('Stub', 'sk-bench'));
        runs.stub.push(await turn(page, 'Say hello.', HELLO_TEXT));
        await useLocal(page, 'Tiny', paths.answer);
        const before = await rssKb(browser.profile);
        runs.local.push(await turn(page, 'Say hello.', ANSWER));
        runs.memoryKb.push((await rssKb(browser.profile)) - before);
        runs.localAgain.push(await turn(page, 'Say hello again.', ANSWER));
      } finally {
        await browser.close();
      }
      process.stderr.write(`bench: local round ${round + 1} done\n`);
    }
  } finally {
    await stub.close();
    await rm(dir, { recursive: true, force: true });
  }
  const row = (name, xs, load) => [
    name,
    load ? fmt(median(xs.map((x) => x.load))) : '—',
    fmt(median(xs.map((x) => x.first))),
    fmt(median(xs.map((x) => x.tokensPerSecond))),
  ];
  const rows = [
    row('stub server (OpenAI-compatible)', runs.stub, false),
    row('local model, first turn (loads it)', runs.local, true),
    row('local model, next turn (loaded)', runs.localAgain, false),
  ];
  const text =
    table(
      'Local model vs the stub server, through the app (ms, median; fresh profile per round; the tiny scripted 269 KB model)',
      ['provider', 'model load', 'send → first token', 'tokens/s'],
      rows,
    ) + `\nAdded browser memory for the local model (RSS of the profile's processes, median): ${fmt(median(runs.memoryKb) / 1024, 1)} MB\n`;
  return { text, data: runs };
}

/** Loads the 'loop' model with `threads` and generates `tokens` tokens,
 * in the page (whose origin serves wllama). */
async function generateIn(page, bytes, threads, tokens) {
  return page.evaluate(
    async ({ bytes, threads, tokens }) => {
      const { Wllama } = await import('/wllama/index.js');
      const quiet = { debug() {}, log() {}, warn() {}, error() {} };
      const wllama = new Wllama({ default: '/wllama/wllama.wasm' }, { suppressNativeLog: true, logger: quiet });
      const blob = new Blob([Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))]);
      const t0 = performance.now();
      await wllama.loadModel([blob], { n_ctx: 1024, n_threads: threads });
      const loaded = performance.now();
      let first;
      let count = 0;
      await wllama.createCompletion({
        prompt: '<|im_start|>user\nCount.<|im_end|>\n<|im_start|>assistant\n',
        stream: true,
        max_tokens: tokens,
        temperature: 0,
        onData(chunk) {
          if (chunk.choices?.[0]?.text) {
            first ??= performance.now();
            count++;
          }
        },
      });
      const done = performance.now();
      const used = wllama.getNumThreads?.() ?? threads;
      await wllama.exit();
      return {
        isolated: self.crossOriginIsolated,
        threads: used,
        load: loaded - t0,
        first: first - loaded,
        tokensPerSecond: (count - 1) / ((done - first) / 1000),
      };
    },
    { bytes, threads, tokens },
  );
}

export async function threadsGroup(rounds) {
  if (!APP) throw new Error('LIFELINE_APP_URL is not set (run this through cargo xtask bench)');
  const { dir, paths } = await models(['loop']);
  const bytes = (await readFile(paths.loop)).toString('base64');
  const runs = { plain1: [], isolated1: [], isolated2: [] };
  const browser = await openBrowser(VIEWPORTS.desktop);
  try {
    const { page, context } = browser;
    // Two blank pages of the app's origin: as `cargo xtask serve` serves it
    // (not isolated), and with the two headers threads need.
    const headers = { 'content-type': 'text/html' };
    const isolated = {
      ...headers,
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    };
    await context.route(`${APP}bench-plain.html`, (r) => r.fulfill({ headers, body: '<!doctype html><title>plain</title>' }));
    await context.route(`${APP}bench-isolated.html`, (r) => r.fulfill({ headers: isolated, body: '<!doctype html><title>isolated</title>' }));
    for (let round = 0; round < rounds; round++) {
      await page.goto(`${APP}bench-plain.html`);
      runs.plain1.push(await generateIn(page, bytes, 1, 200));
      await page.goto(`${APP}bench-isolated.html`);
      runs.isolated1.push(await generateIn(page, bytes, 1, 200));
      runs.isolated2.push(await generateIn(page, bytes, 2, 200));
      process.stderr.write(`bench: threads round ${round + 1} done\n`);
    }
  } finally {
    await browser.close();
    await rm(dir, { recursive: true, force: true });
  }
  const row = (name, xs) => [
    name,
    String(xs[0].isolated),
    String(xs[0].threads),
    fmt(median(xs.map((x) => x.load))),
    fmt(median(xs.map((x) => x.first))),
    fmt(median(xs.map((x) => x.tokensPerSecond))),
  ];
  const text = table(
    'wllama threads (ms, median; the 269 KB loop model, 200 tokens, n_ctx 1024)',
    ['page', 'crossOriginIsolated', 'threads', 'load', 'first token', 'tokens/s'],
    [
      row('as served (no COOP/COEP), 1 thread', runs.plain1),
      row('COOP/COEP, 1 thread', runs.isolated1),
      row('COOP/COEP, 2 threads', runs.isolated2),
    ],
  );
  return { text, data: runs };
}
