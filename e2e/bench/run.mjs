// Store benchmarks in headless Chromium, run by `cargo xtask bench` against
// the bench bundle it serves (LIFELINE_BENCH_URL). Not part of `cargo xtask
// test`. Candidate and baselines alternate in every round (the order rotates)
// in one browser session; each figure is the median of the rounds.
//
// Environment: LIFELINE_BENCH_URL (required), BENCH_ROUNDS (default 5),
// BENCH_JSON (optional path for the raw results), BENCH_ONLY (comma-separated
// group names: append, recovery, output, first-visit, local, threads).
import { writeFile } from 'node:fs/promises';
import { openBrowser, VIEWPORTS } from '../lib/browser.mjs';
import { localGroup, threadsGroup } from './local.mjs';
import { rendererCpuMs } from './procs.mjs';
import { fmt, median, table } from './table.mjs';

const URL = process.env.LIFELINE_BENCH_URL;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
if (!URL) throw new Error('LIFELINE_BENCH_URL is not set (run this through cargo xtask bench)');

const rotate = (xs, k) => xs.map((_, i) => xs[(i + k) % xs.length]);

// ---------------------------------------------------------------------------
// Row groups. Each takes the page and returns { text, data }.

/** Journal append throughput vs raw IndexedDB and Dexie bulkPut. */
async function appendGroup(page) {
  const impls = ['journal', 'raw', 'dexie'];
  const cases = [
    // [batch size, events per run, strict]
    [1, 1000, false],
    [10, 5000, false],
    [100, 20000, false],
    [1, 200, true],
    [10, 1000, true],
    [100, 5000, true],
  ];
  const rows = [];
  const data = [];
  for (const [size, total, strict] of cases) {
    const runs = Object.fromEntries(impls.map((i) => [i, []]));
    let durability;
    for (let round = 0; round < ROUNDS; round++) {
      for (const impl of rotate(impls, round)) {
        const r = await page.evaluate(
          (task) => window.benchTask(task),
          { kind: 'append', impl, size, total, strict, name: `bench-append-${impl}` },
        );
        durability = r.durability;
        runs[impl].push((total / r.ms) * 1000);
      }
    }
    const m = Object.fromEntries(impls.map((i) => [i, median(runs[i])]));
    data.push({ size, total, durability, rounds: ROUNDS, events_per_s: runs, median: m });
    rows.push([
      size,
      durability,
      fmt(total),
      fmt(m.journal),
      fmt(m.raw),
      fmt(m.dexie),
      `${fmt(m.journal / m.raw, 2)}×`,
      `${fmt(m.journal / m.dexie, 2)}×`,
    ]);
    process.stderr.write(`bench: append ${size}/${durability} done\n`);
  }
  const text = table(
    'Journal append throughput (events/s, median; target ≥ 0.9× raw)',
    ['events/batch', 'durability', 'events/run', 'Journal::write_batch', 'raw IndexedDB', 'Dexie bulkPut', 'journal/raw', 'journal/Dexie'],
    rows,
  );
  return { text, data };
}

/** Startup: open + load (newest snapshot + tail) + fold, in a fresh worker. */
async function recoveryGroup(page) {
  // RECOVERY_SIZES=1000,100000,1000000 adds the million-event history
  // (minutes to generate and write), left out by default.
  const sizes = (process.env.RECOVERY_SIZES || '1000,10000,100000').split(',').map(Number);
  const rows = [];
  const data = [];
  const preparedFor = new Map();
  for (const events of sizes) {
    const name = `bench-recovery-${events}`;
    preparedFor.set(events, await page.evaluate((task) => window.benchTask(task), {
      kind: 'recovery-prepare',
      name,
      events,
    }));
  }
  // Rounds alternate between the sizes, so that whatever else the machine
  // does at one moment weighs on every size alike, not on one of them.
  const measured = new Map(sizes.map((events) => [events, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const events of sizes) {
      measured.get(events).push(
        await page.evaluate((task) => window.benchTask(task, { fresh: true }), {
          kind: 'recovery-measure',
          name: `bench-recovery-${events}`,
        }),
      );
    }
  }
  for (const events of sizes) {
    await page.evaluate((task) => window.benchTask(task), { kind: 'delete', name: `bench-recovery-${events}` });
  }
  for (const events of sizes) {
    const runs = measured.get(events);
    const prepared = preparedFor.get(events);
    const med = (k) => median(runs.map((r) => r[k]));
    const last = runs[runs.length - 1];
    data.push({ events, prepared, runs });
    rows.push([
      fmt(events),
      fmt(prepared.entries),
      prepared.snapshot_position ? fmt(prepared.snapshot_position) : `none (${prepared.snapshot_refused ? 'refused' : 'n/a'})`,
      `${fmt(prepared.snapshot_bytes / 1024 / 1024, 1)} MB`,
      fmt(last.tail),
      fmt(med('open_ms'), 1),
      fmt(med('load_ms'), 1),
      fmt(med('fold_ms'), 1),
      fmt(med('total_ms'), 1),
      `${fmt(last.wasm_bytes / 1024 / 1024, 1)} MB`,
      last.js_heap == null ? 'n/a' : `${fmt(last.js_heap / 1024 / 1024, 1)} MB`,
      fmt(med('decode_serde_json_ms'), 1),
      fmt(med('decode_browser_ms'), 1),
      `${fmt(med('decode_browser_ms') / med('decode_serde_json_ms'), 2)}×`,
    ]);
    process.stderr.write(`bench: recovery ${events} done\n`);
  }
  const total = (n) => {
    const d = data.find((x) => x.events === n);
    return d ? median(d.runs.map((r) => r.total_ms)) : null;
  };
  const base = total(1000);
  const ratios = [[100000, '100k'], [1000000, '1M']]
    .filter(([n]) => base && total(n) != null)
    .map(([n, label]) => `${label} / 1k total: ${fmt(total(n) / base, 2)}×\n`)
    .join('');
  const text =
    table(
      'Recovery open time (ms, median; target: 100k within 1.5× of 1k)',
      ['events', 'entries', 'snapshot at', 'snapshot size', 'tail read', 'open', 'load', 'fold', 'total', 'wasm memory after fold', 'JS heap after fold', 'decode: serde_json', 'decode: lifeline_codec', 'browser / serde_json'],
      rows,
    ) + `\n${ratios}`;
  return { text, data };
}

// A command printing about 10 MB, end to end through the real app: runtime
// worker → controller (journal) → page transcript. Reports the time from
// Send to the block reading `completed`, the output rate, and the longest
// main-thread task while it ran (target ≤ 50 ms). Two baselines in the
// same browser: the same bytes relayed along the same `postMessage` path
// with no journal (`relayBaseline`), which is what issue 15 compares
// against, and the same page rendering the same text with no worker or
// journal in between (one `<pre>` filled in 64 KiB steps, one step per
// frame), which shows what rendering everything would cost.
async function outputGroup(page) {
  const app = await page.context().newPage();
  const rows = [];
  const data = [];
  try {
    await app.goto(process.env.LIFELINE_APP_URL);
    await app.getByRole('status').filter({ hasText: /^Connected$/ }).waitFor({ timeout: 60_000 });
    for (let round = 0; round < Math.min(ROUNDS, 3); round++) {
      const last = 1_300_000 + round;
      const line = `seq 1 ${last}`;
      await app.evaluate(() => {
        window.__longest = 0;
        window.__observer?.disconnect();
        window.__observer = new PerformanceObserver((list) => {
          for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
        });
        window.__observer.observe({ type: 'longtask', buffered: false });
      });
      await app.getByRole('textbox', { name: 'Message' }).fill(`$ ${line}`);
      // Both ends in the page's own clock: the Send click's event, and a
      // MutationObserver the moment the block's outcome reads "completed".
      // Playwright's own wait polls every 500 ms after its first few tries,
      // which rounded a 0.45 s run up to 0.9 s, and its click's checks take
      // tens of milliseconds before the event.
      await app.evaluate((label) => {
        window.__output = {};
        document.addEventListener('click', () => (window.__output.sent ??= performance.now()), { capture: true, once: true });
        const outcome = `[role=group][aria-label="${CSS.escape(label)}"] .outcome`;
        const observer = new MutationObserver(() => {
          if (document.querySelector(outcome)?.dataset.outcome === 'completed') {
            window.__output.completed = performance.now();
            observer.disconnect();
          }
        });
        observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-outcome'] });
      }, `Command: ${line}`);
      await app.getByRole('button', { name: 'Send' }).click();
      const block = app.getByRole('group', { name: `Command: ${line}` });
      await app.waitForFunction(() => window.__output.completed !== undefined, null, { timeout: 300_000 });
      await block.getByText('completed', { exact: true }).waitFor();
      const seconds = await app.evaluate(() => (window.__output.completed - window.__output.sent) / 1000);
      const longest = await app.evaluate(() => window.__longest);
      const bytes = await app.evaluate((n) => {
        let total = 0;
        for (let i = 1; i <= n; i++) total += String(i).length + 1;
        return total;
      }, last);
      const baseline = await app.evaluate(async (n) => {
        let text = '';
        for (let i = 1; i <= n; i++) text += i + '\n';
        const pre = document.createElement('pre');
        document.body.appendChild(pre);
        const t0 = performance.now();
        for (let at = 0; at < text.length; at += 65536) {
          pre.textContent = text.slice(Math.max(0, at - 262144), at + 65536);
          await new Promise((r) => requestAnimationFrame(r));
        }
        pre.remove();
        return (performance.now() - t0) / 1000;
      }, last);
      const relay = await page.evaluate(relayBaseline, last);
      data.push({ bytes, seconds, longest, baseline, relay });
      rows.push([
        fmt(bytes / 1024 / 1024, 1),
        fmt(seconds, 2),
        fmt(bytes / 1024 / 1024 / seconds, 2),
        fmt(longest, 0),
        fmt(relay, 2),
        fmt(seconds / relay, 2) + '×',
        fmt(baseline, 2),
        fmt(baseline / seconds, 2) + '×',
      ]);
      process.stderr.write(`bench: output round ${round + 1} done\n`);
    }
  } finally {
    await app.close();
  }
  const text = table(
    '10 MB of command output to the rendered transcript (target: longest main-thread task ≤ 50 ms)',
    ['MB', 'send → completed (s)', 'MB/s', 'longest task over 50 ms (0 = none)', 'baseline: same bytes relayed worker → worker → page, no journal (s)', 'app / relay', 'baseline: same text into one <pre> (s)', 'baseline / app (not like for like: the app shows the inline 64 KiB)'],
    rows,
  );
  return { text, data };
}

// The baseline issue 15 asks for: the same bytes along the same
// `postMessage` path with no journal. A "runtime" worker writes the output
// in the 8 KiB pieces `seq` writes, each as a JSON text message, over a
// MessageChannel to a "controller" worker, which relays every message to
// the page; the page decodes each and keeps the last 64 KiB, as the
// transcript keeps the inline output. Seconds from the start to the last
// byte on the page. Runs in the bench page (its workers are
// bench/static/relay-*.js), in the same browser.
async function relayBaseline(last) {
  const runtime = new Worker('relay-runtime.js');
  const controller = new Worker('relay-controller.js');
  const channel = new MessageChannel();
  const t0 = performance.now();
  const seconds = await new Promise((resolve, reject) => {
    runtime.onerror = controller.onerror = (e) => reject(new Error(`relay worker: ${e.message}`));
    let shown = '';
    controller.onmessage = (m) => {
      const message = JSON.parse(m.data);
      if (message.done) return resolve((performance.now() - t0) / 1000);
      shown = (shown + message.data).slice(-65536);
    };
    controller.postMessage([channel.port1], [channel.port1]);
    runtime.postMessage([channel.port2, last], [channel.port2]);
  });
  runtime.terminate();
  controller.terminate();
  return seconds;
}

// A first visit: a fresh browser profile (no HTTP cache, no compiled wasm,
// no service worker, no storage) opens the page. Times are the page's own
// `performance.now()` (milliseconds since its navigation started), taken by
// a MutationObserver the moment the status reads "Connected" and the moment
// the first command's block reads "completed" — for the app and for the
// baseline (bench/minimal-page + bench/minimal-worker: a Leptos CSR page
// that starts a module worker which opens IndexedDB, the least an app like
// this must do), alternating in every round in the same browser build.
// Goal: app / baseline ≤ 1.5×. Both are also opened from servers that
// hold each response back LIFELINE_SLOW_MS (40 from `cargo xtask bench`),
// as a network's round trip would. Beside
// the times, the CPU time the renderer spent from just before navigation
// until the bench sees "Connected" (a few ms after the page shows it): on
// two cores a first visit is CPU-bound (docs/benchmarks.md, "Twentieth
// stop"), and this tells work saved, which lowers it, from work only
// moved, which leaves it as it is.
const FIRST_VISIT_PROBE = () => {
  window.__firstVisit = {};
  const mark = () => {
    const at = window.__firstVisit;
    if (at.connected === undefined) {
      for (const status of document.querySelectorAll('[role=status]')) {
        if (status.textContent === 'Connected') at.connected = performance.now();
      }
    }
    if (at.sent !== undefined && at.completed === undefined && document.body.textContent.includes('completed')) {
      at.completed = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, { subtree: true, childList: true, characterData: true });
  // Send is the only click: timed from the page's own event, not from
  // before Playwright's click, whose checks took 40-60 ms of their own.
  document.addEventListener('click', () => (window.__firstVisit.sent ??= performance.now()), { capture: true });
};

async function firstVisit(url) {
  const browser = await openBrowser(VIEWPORTS.desktop);
  try {
    const { page } = browser;
    await page.addInitScript(FIRST_VISIT_PROBE);
    const cpuBefore = await rendererCpuMs(browser.profile);
    await page.goto(url);
    await page.getByRole('status').filter({ hasText: /^Connected$/ }).waitFor({ timeout: 120_000 });
    const cpu = (await rendererCpuMs(browser.profile)) - cpuBefore;
    const early = await page.evaluate(() => document.body.textContent.includes('completed'));
    if (early) throw new Error(`${url} shows "completed" before anything was sent`);
    await page.getByRole('textbox', { name: 'Message' }).fill('$ echo hi');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction(() => window.__firstVisit.completed !== undefined, null, { timeout: 120_000 });
    const at = await page.evaluate(() => window.__firstVisit);
    if (browser.errors.length) throw new Error(`${url} logged errors: ${browser.errors.join('; ')}`);
    return { connected: at.connected, sendToCompleted: at.completed - at.sent, cpu };
  } finally {
    await browser.close();
  }
}

async function firstVisitGroup() {
  const impls = {
    app: process.env.LIFELINE_APP_URL,
    baseline: process.env.LIFELINE_MINIMAL_URL,
    // The same two, each response held back LIFELINE_SLOW_MS by the
    // server: loopback has no round trip, so a chain of requests, each
    // made once the one before has arrived, costs nothing there.
    slowApp: process.env.LIFELINE_SLOW_APP_URL,
    slowBaseline: process.env.LIFELINE_SLOW_MINIMAL_URL,
  };
  for (const [impl, url] of Object.entries(impls)) {
    if (!url) throw new Error(`the ${impl} URL is not set (run this through cargo xtask bench)`);
  }
  const runs = { app: [], baseline: [], slowApp: [], slowBaseline: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const impl of rotate(Object.keys(impls), round)) runs[impl].push(await firstVisit(impls[impl]));
    process.stderr.write(`bench: first-visit round ${round + 1} done\n`);
  }
  const med = (impl, key) => median(runs[impl].map((r) => r[key]));
  const rows = [];
  for (const [label, key] of [
    ['navigation → Connected', 'connected'],
    ['Send → first command completed', 'sendToCompleted'],
  ]) {
    const app = med('app', key);
    const baseline = med('baseline', key);
    rows.push([label, fmt(app, 0), fmt(baseline, 0), fmt(app / baseline, 2) + '×']);
  }
  const slowApp = med('slowApp', 'connected');
  const slowBaseline = med('slowBaseline', 'connected');
  rows.push([
    `navigation → Connected, each response ${process.env.LIFELINE_SLOW_MS} ms late`,
    fmt(slowApp, 0),
    fmt(slowBaseline, 0),
    fmt(slowApp / slowBaseline, 2) + '×',
  ]);
  const cpu = (impl) => median(runs[impl].map((r) => r.cpu));
  rows.push([
    'CPU of the renderer (page, workers, compilers), navigation → Connected',
    fmt(cpu('app'), 0),
    fmt(cpu('baseline'), 0),
    fmt(cpu('app') / cpu('baseline'), 2) + '×',
  ]);
  const total = (impl) => median(runs[impl].map((r) => r.connected + r.sendToCompleted));
  rows.push([
    'both (navigation → completed, less the typing)',
    fmt(total('app'), 0),
    fmt(total('baseline'), 0),
    fmt(total('app') / total('baseline'), 2) + '×',
  ]);
  const text = table(
    'First visit (ms, median; fresh profile each time; goal: app ≤ 1.5× the minimal Leptos page + worker)',
    ['measure', 'app', 'baseline', 'app / baseline'],
    rows,
  );
  return { text, data: runs };
}

const GROUPS = [
  ['append', appendGroup],
  ['recovery', recoveryGroup],
  ['output', outputGroup],
  ['first-visit', firstVisitGroup],
  // A fresh browser per round, each loading the model: three rounds at most.
  ['local', () => localGroup(Math.min(ROUNDS, 3))],
  ['threads', () => threadsGroup(Math.min(ROUNDS, 3))],
];

const browser = await openBrowser(VIEWPORTS.desktop);
let exitCode = 0;
try {
  const { page } = browser;
  await page.goto(URL);
  await page.evaluate(() => window.benchReady);
  const version = browser.context.browser()?.version() ?? 'unknown';
  const results = { chromium: version, rounds: ROUNDS, groups: {} };
  let out = `Chromium ${version}, ${ROUNDS} rounds per figure\n\n`;
  const only = process.env.BENCH_ONLY?.split(',');
  for (const [name, group] of GROUPS.filter(([n]) => !only || only.includes(n))) {
    const { text, data } = await group(page);
    results.groups[name] = data;
    out += text + '\n';
  }
  process.stdout.write(out);
  if (process.env.BENCH_JSON) await writeFile(process.env.BENCH_JSON, JSON.stringify(results, null, 2));
  if (browser.errors.length) process.stderr.write(`browser errors:\n${browser.errors.join('\n')}\n`);
} catch (error) {
  process.stderr.write(`bench failed: ${error.stack ?? error}\n`);
  exitCode = 1;
} finally {
  await browser.close();
}
process.exit(exitCode);
