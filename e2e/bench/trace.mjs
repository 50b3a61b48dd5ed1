// `cargo xtask trace <flow>`: one user flow under a Chromium trace with the
// V8 CPU profiler on for every thread, then, per thread, its busiest
// functions, its busy milliseconds per time slice and its long tasks. The
// bundle it is pointed at keeps its function names (target/trace-dist).
//
// Flows: first-visit (a fresh profile from navigation to "Connected"),
// send (the first command of a first visit, from Send to "completed") and
// output (`seq` writing 8.9 MB, from Send to "completed").
//
// What this is for: seeing what waits on what. A thread that is busy in
// every slice is the bottleneck; slices where no thread is busy are a wait
// (a timer, a transaction, a worker starting), which no CPU profile shows
// by itself. Each thread's report also counts the wasm functions V8
// compiled on their first call, on that thread: on a first visit a large
// part of the page's first render (docs/benchmarks.md, "Twentieth stop").
import { chromium } from 'playwright-core';
import { writeFileSync } from 'node:fs';
import { ARGS } from '../lib/browser.mjs';

const flow = process.argv[2] ?? 'first-visit';
const url = process.env.LIFELINE_URL;
const CATEGORIES = [
  '__metadata',
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-v8.cpu_profiler',
  'v8',
  'v8.wasm',
];
const LINES = { send: 'echo hi', output: 'seq 1 1300000' };

// Marks the page's own clock: when the status line first reads
// "Connected", when Send was pressed and when the command's outcome first
// reads "completed".
const PROBE = (line) => {
  window.__at = {};
  const outcome = `[role=group][aria-label="${CSS.escape(`Command: ${line}`)}"] .outcome`;
  new MutationObserver(() => {
    const at = window.__at;
    if (at.connected === undefined) {
      for (const s of document.querySelectorAll('[role=status]')) {
        if (s.textContent === 'Connected') at.connected = performance.now();
      }
    }
    if (at.completed === undefined && document.querySelector(outcome)?.dataset.outcome === 'completed') {
      at.completed = performance.now();
    }
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['data-outcome'] });
  document.addEventListener('click', () => (window.__at.sent ??= performance.now()), { capture: true });
};

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ARGS });
let trace;
let marks;
try {
  // The browser's own first start is not the app's.
  const warm = await browser.newContext();
  await (await warm.newPage()).goto('about:blank');
  await warm.close();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const line = LINES[flow] ?? LINES.send;
  await page.addInitScript(PROBE, line);
  if (flow === 'first-visit') await browser.startTracing(page, { categories: CATEGORIES });
  await page.goto(url);
  await page.waitForFunction(() => window.__at.connected !== undefined, null, { timeout: 60_000 });
  if (flow !== 'first-visit') {
    await page.getByRole('textbox', { name: 'Message' }).fill(`$ ${line}`);
    await browser.startTracing(page, { categories: CATEGORIES });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction(() => window.__at.completed !== undefined, null, { timeout: 300_000 });
  }
  marks = await page.evaluate(() => window.__at);
  trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
} finally {
  await browser.close();
}
if (process.env.TRACE_OUT) writeFileSync(process.env.TRACE_OUT, JSON.stringify(trace));

const events = trace.traceEvents ?? trace;
const threads = new Map();
for (const e of events) {
  if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
}
const profiles = new Map();
for (const e of events) {
  if (e.name === 'Profile') {
    profiles.set(`${e.pid}:${e.id}`, { thread: `${e.pid}:${e.tid}`, start: e.args.data.startTime, nodes: new Map(), samples: [], deltas: [] });
  } else if (e.name === 'ProfileChunk') {
    const p = profiles.get(`${e.pid}:${e.id}`);
    const data = e.args.data;
    if (!p) continue;
    for (const node of data.cpuProfile?.nodes ?? []) p.nodes.set(node.id, node);
    p.samples.push(...(data.cpuProfile?.samples ?? []));
    p.deltas.push(...(data.timeDeltas ?? []));
  }
}
// The app's renderer is the process with the workers; other renderers
// (the warm-up page, browser internals) are left out.
const app = new Set([...threads].filter(([, name]) => name.startsWith('DedicatedWorker')).map(([key]) => key.split(':')[0]));
for (const [key, p] of profiles) if (!app.has(p.thread.split(':')[0])) profiles.delete(key);
// The trace's clock is not the page's: times below count from the first
// profiled sample.
const t0 = Math.min(...[...profiles.values()].map((p) => p.start));
const SLICE = Number(process.env.TRACE_SLICE_MS ?? (flow === 'output' ? 50 : 20));
const TOP = Number(process.env.TRACE_TOP ?? 12);
const ms = (v) => v.toFixed(1).padStart(7);

const page = flow === 'first-visit' ? `navigation → Connected ${marks.connected.toFixed(0)} ms` : `Send → completed ${(marks.completed - marks.sent).toFixed(0)} ms`;
console.log(`## ${flow}: ${page} (in the page's clock, profiler on)\n`);
console.log(`Times below are ms from the first profiled sample; slices of ${SLICE} ms.\n`);
for (const p of profiles.values()) {
  const self = new Map();
  const slices = [];
  let at = p.start;
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    at += p.deltas[i] ?? 0;
    const name = p.nodes.get(p.samples[i])?.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') continue;
    const dt = (p.deltas[i + 1] ?? 0) / 1000;
    busy += dt;
    self.set(name, (self.get(name) ?? 0) + dt);
    const slice = Math.floor((at - t0) / 1000 / SLICE);
    slices[slice] = (slices[slice] ?? 0) + dt;
  }
  if (busy < 5) continue;
  console.log(`### ${threads.get(p.thread) ?? p.thread} (${p.thread}): busy ${busy.toFixed(0)} ms\n`);
  console.log('```');
  for (const [name, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${ms(t)}  ${name.slice(0, 140)}`);
  console.log('\nbusy ms per slice:');
  const row = Array.from(slices, (v) => String(Math.round(v ?? 0)).padStart(3));
  for (let i = 0; i < row.length; i += 25) console.log(`${String(i * SLICE).padStart(6)}: ${row.slice(i, i + 25).join('')}`);
  const tid = Number(p.thread.split(':')[1]);
  const long = events
    .filter((e) => e.ph === 'X' && e.name === 'RunTask' && e.tid === tid && e.dur >= 10_000)
    .sort((a, b) => a.ts - b.ts)
    .map((e) => `${((e.ts - t0) / 1000).toFixed(0)}+${(e.dur / 1000).toFixed(0)}`);
  if (long.length) console.log(`\ntasks of 10 ms or more (start+ms): ${long.join(' ')}`);
  const lazy = events.filter((e) => e.ph === 'X' && e.name === 'wasm.CompileLazy' && `${e.pid}:${e.tid}` === p.thread);
  if (lazy.length) {
    const took = lazy.reduce((sum, e) => sum + (e.dur ?? 0), 0) / 1000;
    console.log(`\nwasm functions compiled on their first call: ${lazy.length}, ${took.toFixed(0)} ms (traced)`);
  }
  console.log('```\n');
}
