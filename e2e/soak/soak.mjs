// The crash soak's driver: cycles of "send numbered commands, interrupt them
// at a seeded random moment with one of five faults, recover as a user
// would", on one browser profile kept across every cycle (the last fault
// kind closes and reopens the browser on it). Everything waits on what the
// page shows; the only timer is the random interruption delay, which is the
// point of the exercise.
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ARGS, BASE_URL, VIEWPORTS } from '../lib/browser.mjs';
import { card, send } from '../lib/ui.mjs';
import { readJournalRows } from '../lib/journal.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';
import { SETTLED, check, soakLine } from './check.mjs';

export const FAULTS = ['reload', 'renderer crash', 'runtime closed', 'controller closed', 'browser reopened'];

/** Commands per prompt; each appends its line, then sleeps one second. */
export const STEPS = 4;
/** The interruption lands uniformly in [0, WINDOW_MS) after Send: the prompt
 * runs a little over STEPS seconds, so most faults hit a command and some
 * hit a finished turn. */
export const WINDOW_MS = 5_000;
/** How long a user would wait for a way forward before calling it stuck. */
const RECOVERY_MS = 90_000;
/** How long a user would look at a Mark button that did nothing before
 * clicking it again. */
const VERDICT_MS = 20_000;

/** mulberry32: small, seedable, and the same on every machine. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The fault of every cycle and its delay. Each block of five cycles holds
 * every fault kind once, in a seeded order, so 5 cycles cover all kinds and
 * 50 give each kind ten. */
export function schedule(seed, cycles) {
  const next = random(seed);
  const plan = [];
  while (plan.length < cycles) {
    const block = [...FAULTS];
    for (let i = block.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [block[i], block[j]] = [block[j], block[i]];
    }
    for (const fault of block) plan.push({ fault, delayMs: Math.floor(next() * WINDOW_MS) });
  }
  // Its own stream, so adding it left every seed's faults and delays as
  // they were.
  const coin = random(seed ^ 0x9e3779b9);
  return plan.slice(0, cycles).map((p, i) => ({ cycle: i + 1, ...p, mark: coin() < 0.5 }));
}

export function prompt(cycle) {
  return Array.from({ length: STEPS }, (_, i) => `$ ${soakLine(cycle, i + 1)}`).join('\n');
}

/** One browser on a profile directory that outlives it. */
async function launch(profile) {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ARGS,
    viewport: VIEWPORTS.desktop,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(BASE_URL);
  return { context, page };
}

function workerOf(page, matches) {
  return page.workers().find((w) => matches(new URL(w.url()).pathname));
}

/** Closes a worker from inside, as a crash would end it; the close runs in a
 * later task so the evaluate call itself returns. Waits for the worker to
 * exist if it is being replaced right now. */
async function closeWorker(page, matches) {
  let worker = workerOf(page, matches);
  if (!worker) {
    worker = await page.waitForEvent('worker', {
      predicate: (w) => matches(new URL(w.url()).pathname),
      timeout: RECOVERY_MS,
    });
  }
  await worker.evaluate(() => setTimeout(() => self.close(), 0));
}

/** Injects `fault` into the browser in `state`; may replace its page or
 * context. */
async function inject(state, fault, log) {
  switch (fault) {
    case 'reload':
      await state.page.reload({ waitUntil: 'commit' });
      return;
    case 'renderer crash': {
      const crashed = state.page.waitForEvent('crash', { timeout: RECOVERY_MS });
      const cdp = await state.context.newCDPSession(state.page);
      // Never answers: the renderer it would answer from is gone.
      cdp.send('Page.crash').catch(() => {});
      await crashed;
      // What a user does with a crashed tab: reload it. Chromium gives the
      // tab a fresh renderer on navigation.
      try {
        await state.page.goto(BASE_URL, { waitUntil: 'commit' });
      } catch (error) {
        log(`  (the crashed tab would not navigate: ${String(error).split('\n')[0]}; opening a new tab)`);
        await state.page.close().catch(() => {});
        state.page = await state.context.newPage();
        await state.page.goto(BASE_URL, { waitUntil: 'commit' });
      }
      return;
    }
    case 'runtime closed':
      await closeWorker(state.page, (path) => path.endsWith('runtime.js'));
      return;
    case 'controller closed':
      await closeWorker(state.page, (path) => path.includes('controller'));
      return;
    case 'browser reopened': {
      await state.context.close();
      Object.assign(state, await launch(state.profile));
      return;
    }
    default:
      throw new Error(`unknown fault ${fault}`);
  }
}

/**
 * Takes the way forward a user would until the composer accepts `text`, and
 * sends it (or, with `text` null, only waits until it would): wait for
 * Connected, click Resume whenever the card offers it, with `mark` judge the
 * card's uncertain soak commands (otherwise leave them as the app shows
 * them), then Send. Returns the Resume clicks.
 */
async function recoverAndSend(page, text, { mark = false, marks = { done: 0, notDone: 0 }, findings = [], when = '' } = {}) {
  const connected = page.getByRole('status').filter({ hasText: /^Connected$/ });
  const box = page.getByRole('textbox', { name: 'Message', disabled: false });
  const sendButton = page.getByRole('button', { name: 'Send', exact: true, disabled: false });
  const resume = card(page).getByRole('button', { name: 'Resume', exact: true, disabled: false });
  const deadline = Date.now() + RECOVERY_MS;
  const left = () => Math.max(deadline - Date.now(), 1);
  let resumed = 0;
  await connected.or(resume).first().waitFor({ timeout: left() });
  for (;;) {
    await box.or(resume).first().waitFor({ timeout: left() });
    if (await resume.count()) {
      await resume.first().click({ timeout: left() });
      resumed += 1;
      continue;
    }
    const draft = text ?? 'soak: is the composer free?';
    if ((await box.inputValue()) !== draft) await box.fill(draft);
    await sendButton.or(resume).first().waitFor({ timeout: left() });
    if (await resume.count()) continue;
    if (mark && (await markUncertain(page, marks, findings, when))) continue;
    if (text === null) {
      await box.fill('');
      return resumed;
    }
    try {
      await sendButton.click({ timeout: 5_000 });
      return resumed;
    } catch (error) {
      // Send went disabled between seeing it and clicking (the state moved
      // on): look again.
      if (Date.now() > deadline) throw error;
    }
  }
}

/** What a careful user does with the card's uncertain soak commands: look
 * in the workspace whether the command's line is there (as Verify would
 * show) and say so with Mark done or Mark not done. Returns whether it
 * marked anything. */
async function markUncertain(page, marks, findings, when) {
  // Items already judged keep their place in the card with the verdict shown
  // instead of the buttons.
  const item = card(page)
    .getByRole('group', { name: /^Uncertain: echo \d+-\d+ >> soak\.txt/ })
    .filter({ has: page.getByRole('button', { name: 'Mark done', exact: true }) })
    .first();
  if ((await item.count()) === 0) return false;
  const name = (await item.getAttribute('aria-label')) ?? '';
  const numbered = /echo (\d+-\d+) >>/.exec(name)?.[1];
  const file = (await readWorkspaceFile(page, 'soak.txt')).join('').split('\n');
  const done = numbered !== undefined && file.includes(numbered);
  const judged = card(page).getByRole('group', { name, exact: true });
  await judged.getByRole('button', { name: done ? 'Mark done' : 'Mark not done', exact: true }).click({ timeout: 10_000 });
  // Recorded once the buttons give way to the verdict (or the card goes).
  const recorded = await judged
    .getByRole('button', { name: 'Mark done', exact: true })
    .waitFor({ state: 'detached', timeout: VERDICT_MS })
    .then(() => true, () => false);
  if (!recorded) {
    findings.push(
      `${when}: ${done ? 'Mark done' : 'Mark not done'} on "${name.replace(/^Uncertain: /, '')}" was not recorded ` +
        `within ${VERDICT_MS / 1000} s and nothing said so (${JSON.stringify(await describe(page))}); the soak clicked again`,
    );
    return true;
  }
  if (done) marks.done += 1;
  else marks.notDone += 1;
  return true;
}

/** What the page and the journal show when no way forward appeared: the
 * words for a finding. */
async function describe(page) {
  const text = async (locator) =>
    ((await locator.count()) ? ((await locator.first().textContent()) ?? '').trim() : '(none)').slice(0, 300);
  const blocks = page.getByRole('log', { name: 'Transcript' }).getByRole('group', { name: /^Command: / });
  const shown = [];
  for (let i = Math.max((await blocks.count()) - 6, 0); i < (await blocks.count()); i += 1) {
    const block = blocks.nth(i);
    shown.push(`${(await block.getAttribute('aria-label'))?.replace(/^Command: /, '')} → ${await text(block.locator('.outcome'))}`);
  }
  let journal = '(unreadable)';
  try {
    const { rows, quarantined } = await readJournalRows(page);
    const { commands, entries } = check({ rows, quarantined, file: '' });
    const open = commands.filter((c) => !SETTLED.has(c.outcome));
    journal = `${entries} entries; not settled: ${open.map((c) => `${c.line} (${c.outcome})`).join(', ') || 'none'}`;
  } catch (error) {
    journal = `(could not be read: ${String(error).split('\n')[0]})`;
  }
  return {
    status: await text(page.locator('p.connection[role="status"]')),
    lifecycle: await text(page.locator('.lifecycle [role="status"]')),
    notices: (await page.locator('.notices .notice > p:first-child').allTextContents()).map((t) => t.trim()).slice(-3),
    card: await text(card(page)),
    blocks: shown,
    sendDisabled: await page.getByRole('button', { name: 'Send', exact: true }).isDisabled().catch(() => null),
    stopDisabled: await page.getByRole('button', { name: 'Stop', exact: true }).isDisabled().catch(() => null),
    journal,
  };
}

/**
 * Runs the soak and checks it. `log` gets one line per cycle.
 * @returns {Promise<{seed, cycles, durationMs, plan, findings: string[], violations: string[], byFault: Map,
 *   entries: number, resumed: number, marks: {done, notDone}, recovery: Map<string, number[]>}>}
 *   `recovery` holds, per fault kind, the milliseconds from the fault until
 *   the composer took the next prompt.
 */
export async function runSoak({ seed, cycles, log = console.log }) {
  const started = Date.now();
  const plan = schedule(seed, cycles);
  const profile = await mkdtemp(join(tmpdir(), 'lifeline-soak-'));
  const state = { profile, ...(await launch(profile)) };
  const findings = [];
  const marks = { done: 0, notDone: 0 };
  const recovery = new Map();
  let resumed = 0;
  let previous = null;
  const recovered = (since) => {
    if (!previous) return;
    const list = recovery.get(previous.fault) ?? [];
    list.push(Date.now() - since);
    recovery.set(previous.fault, list);
  };
  let injectedAt = 0;
  try {
    for (const { cycle, fault, delayMs } of plan) {
      const t0 = Date.now();
      const how = { mark: previous?.mark ?? false, marks, findings, when: `before cycle ${cycle}'s prompt` };
      try {
        const r = await recoverAndSend(state.page, prompt(cycle), how);
        resumed += r;
        if (r) log(`  (Resume clicked ${r}×)`);
        recovered(injectedAt);
      } catch (error) {
        findings.push(
          `cycle ${cycle}: no way forward within ${RECOVERY_MS / 1000} s after the previous fault ` +
            `(${JSON.stringify(await describe(state.page))}); the soak reloaded the page. ${String(error).split('\n')[0]}`,
        );
        await state.page.reload({ waitUntil: 'commit' });
        resumed += await recoverAndSend(state.page, prompt(cycle), how);
      }
      await delay(delayMs);
      await inject(state, fault, log);
      injectedAt = Date.now();
      previous = plan[cycle - 1];
      log(`cycle ${String(cycle).padStart(2)}: ${fault.padEnd(17)} after ${String(delayMs).padStart(4)} ms (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
    // The last fault gets its recovery too, so "settled" is judged on an app
    // that had the chance to settle.
    try {
      resumed += await recoverAndSend(state.page, null, { mark: previous?.mark ?? false, marks, findings, when: 'after the last cycle' });
      recovered(injectedAt);
    } catch (error) {
      findings.push(`after the last cycle: no way forward (${JSON.stringify(await describe(state.page))}). ${String(error).split('\n')[0]}`);
    }
    const { rows, quarantined } = await readJournalRows(state.page);
    const file = (await readWorkspaceFile(state.page, 'soak.txt')).join('');
    const faults = new Map(plan.map((p) => [p.cycle, p.fault]));
    const verdict = check({ rows, quarantined, file, faults });
    return { seed, cycles, durationMs: Date.now() - started, plan, findings, resumed, marks, recovery, ...verdict };
  } finally {
    await state.context.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
  }
}

/** The per-fault table, as Markdown. */
export function table(byFault, recovery = new Map()) {
  const head = '| fault | cycles | commands | completed | uncertain | other | lines found | duplicates | recovery s (median / max) |';
  const rows = [head, '|---|--:|--:|--:|--:|--:|--:|--:|--:|'];
  const seconds = (list) => {
    if (!list?.length) return '–';
    const sorted = [...list].sort((a, b) => a - b);
    return `${(sorted[Math.floor((sorted.length - 1) / 2)] / 1000).toFixed(1)} / ${(sorted.at(-1) / 1000).toFixed(1)}`;
  };
  const total = { cycles: 0, commands: 0, completed: 0, uncertain: 0, other: 0, lines: 0, duplicates: 0 };
  for (const kind of [...FAULTS, ...[...byFault.keys()].filter((k) => !FAULTS.includes(k))]) {
    const r = byFault.get(kind);
    if (!r) continue;
    for (const k of Object.keys(total)) total[k] += r[k];
    rows.push(`| ${kind} | ${r.cycles} | ${r.commands} | ${r.completed} | ${r.uncertain} | ${r.other} | ${r.lines} | ${r.duplicates} | ${seconds(recovery.get(kind))} |`);
  }
  const t = total;
  rows.push(`| **all** | ${t.cycles} | ${t.commands} | ${t.completed} | ${t.uncertain} | ${t.other} | ${t.lines} | ${t.duplicates} | ${seconds([...recovery.values()].flat())} |`);
  return rows.join('\n');
}
