// The five probes. Each gets a fresh browser profile, injects one fault from
// outside the product, and returns the table row built from what it saw;
// `obs` records every raw observation for the report.
import { BASE_URL } from '../lib/browser.mjs';
import {
  SETTLED,
  UNCERTAIN,
  appears,
  closeWorker,
  command,
  countWorkspaces,
  evidenceOf,
  observeUi,
  outcomeOf,
  outputOf,
  readJournal,
  readWorkspaceFile,
  send,
  short,
  transcript,
  waitOutcome,
  waitRuntimeAssigned,
  workersEndingWith,
} from './lib.mjs';

const STATUS_SETTLED = /^(Connected|Not connected.*|Following another tab.*)$/;

async function waitStatus(page, timeout = 30_000) {
  const status = page.locator('p.connection[role="status"]').filter({ hasText: STATUS_SETTLED });
  await status.first().waitFor({ timeout });
  return (await status.first().textContent()).trim();
}

async function open(page) {
  await page.goto(BASE_URL);
  const status = await waitStatus(page);
  if (status !== 'Connected') throw new Error(`the app did not connect: ${status}`);
}

const json = (v) => JSON.stringify(v);

function sendButton(page) {
  return page.getByRole('button', { name: 'Send' }).and(page.locator(':enabled'));
}

/** Types `text` and sends it once Send is enabled; returns null when sent or
 * what stood in the way after `timeout`. */
async function trySend(page, text, timeout = 30_000) {
  const box = page.getByRole('textbox', { name: 'Message' });
  if (await box.isDisabled()) return 'the Message box is disabled';
  await box.fill(text);
  if (!(await appears(sendButton(page), timeout))) {
    const ui = await observeUi(page);
    return `Send stayed disabled for ${timeout / 1000} s (status ${json(ui.status)}, lifecycle ${json(ui.lifecycle)}, alert ${json(ui.lifecycleAlert)}, runtime ${json(ui.runtime)})`;
  }
  await sendButton(page).click();
  return null;
}

/** Sends a follow-up command and waits for it to settle. */
async function followUp(page, line, obs) {
  const problem = await trySend(page, `$ ${line}`);
  if (problem) {
    obs(`follow-up "${line}" not sent: ${problem}`);
    return { outcome: `not sent: ${problem}`, output: null };
  }
  const block = command(page, line);
  const settled = await appears(block.getByText(SETTLED, { exact: true }), 30_000);
  const outcome = await outcomeOf(block);
  const output = await outputOf(block);
  obs(`follow-up "${line}": ${settled ? '' : 'not settled within 30 s: '}${json(outcome)}, output ${json(output)}`);
  return { outcome, output };
}

function uiLine(label, ui) {
  return (
    `${label}: status ${json(ui.status)}; notices ${json(ui.notices)}; lifecycle ${json(ui.lifecycle)}; ` +
    `card ${json(ui.lifecycleAlert)}; Resume button ${ui.resumeButton ? 'shown' : 'not shown'}; ` +
    `details: runtime ${json(ui.runtime)}, journal ${json(ui.journal)}, position ${ui.position}, ` +
    `controller restarts ${ui.restarts}, role ${json(ui.role)}; ` +
    `Message ${ui.messageDisabled ? 'disabled' : 'enabled'}${ui.refused ? `; refused ${json(ui.refused)}` : ''}`
  );
}

/** Every outcome badge in the transcript that is `may have started` or `lost`. */
async function uncertainBlocks(page) {
  const blocks = transcript(page).getByRole('group', { name: /^Command: / });
  const out = [];
  for (let i = 0; i < (await blocks.count()); i += 1) {
    const block = blocks.nth(i);
    const outcome = await outcomeOf(block);
    if (UNCERTAIN.test(outcome ?? '')) out.push({ line: (await block.getAttribute('aria-label')).slice(9), outcome });
  }
  return out;
}

function runtimeSummary(journal) {
  if (!journal.exists) return 'no journal database';
  const byLease = new Map();
  for (const r of journal.runtime) {
    const lease = short(r.lease);
    if (!byLease.has(lease)) byLease.set(lease, []);
    const tag = r.type.replace('runtime_', '');
    byLease.get(lease).push(`${tag} g${r.generation}${r.cause ? ` (${json(r.cause)})` : ''}@${r.position}`);
  }
  return [...byLease].map(([lease, list]) => `lease ${lease}: ${list.join(', ')}`).join('; ') || 'no runtime records';
}

// ---------------------------------------------------------------------------

const probe1 = {
  id: 1,
  title: 'Interrupt only the controller during active work',
  how:
    'Sends a command printing 1..15 with `sleep 0.2` between, waits until it is `running` and `3` is shown, ' +
    'then closes the worker whose URL ends in `controller.js` (`self.close()` over the DevTools protocol). ' +
    'The page notices the missed heartbeats and starts a new controller. Then waits for the block to settle, ' +
    'compares the output with 1..15, reads the journal, and reloads to see what the journal alone restores.',
  async run({ page, obs }) {
    await open(page);
    const n = 15;
    const line = Array.from({ length: n }, (_, i) => `echo ${i + 1}; sleep 0.2`).join('; ');
    await send(page, `$ ${line}`);
    const block = command(page, line);
    await waitOutcome(block, 'running');
    await block.locator('pre').filter({ hasText: /\b3\b/ }).first().waitFor();
    const before = await observeUi(page);
    obs(uiLine('before the fault', before));
    obs(`output shown before the fault: ${json(await outputOf(block))}`);
    const controllers = workersEndingWith(page, '/controller.js');
    if (controllers.length !== 1) throw new Error(`expected one controller worker, saw ${controllers.length}`);
    const runtimesBefore = workersEndingWith(page, '/runtime.js').length;
    const t0 = Date.now();
    await closeWorker(controllers[0]);
    obs(`closed the controller worker (${runtimesBefore} runtime worker(s) alive)`);
    const noticed = await appears(page.getByText(/controller worker stopped/), 30_000);
    obs(noticed ? `restart notice shown after ${Date.now() - t0} ms` : 'no restart notice within 30 s');
    const settled = await appears(block.getByText(SETTLED, { exact: true }), 60_000);
    const outcome = await outcomeOf(block);
    const exit = (await block.locator('.exit').allTextContents()).join(' ');
    obs(`command outcome ${settled ? `settled after ${Date.now() - t0} ms` : 'not settled within 60 s'}: ${json(outcome)} ${exit}; evidence ${json(await evidenceOf(block))}`);
    const output = (await outputOf(block)) ?? '';
    const numbers = output.split('\n').filter((l) => l.trim() !== '').map(Number);
    const expected = Array.from({ length: n }, (_, i) => i + 1);
    const missing = expected.filter((x) => !numbers.includes(x));
    const duplicates = numbers.length - new Set(numbers).size;
    obs(`output after: ${json(output)} — ${numbers.length} lines, missing ${json(missing)}, ${duplicates} duplicate(s)`);
    await waitStatus(page);
    const after = await observeUi(page);
    obs(uiLine('after', after));
    const runtimesAfter = workersEndingWith(page, '/runtime.js').length;
    obs(`runtime workers alive: ${runtimesBefore} before, ${runtimesAfter} after`);
    const journal = await readJournal(page);
    obs(`journal: version ${journal.version}, values per store ${json(journal.counts)}, record types ${json(journal.types)}`);
    obs(`runtime records: ${runtimeSummary(journal)}`);
    const uncertain = await uncertainBlocks(page);

    await page.reload();
    await waitStatus(page);
    const reloaded = command(page, line);
    await appears(reloaded.getByText(SETTLED, { exact: true }), 30_000);
    const reOutput = (await outputOf(reloaded)) ?? '';
    const reNumbers = reOutput.split('\n').filter((l) => l.trim() !== '').map(Number);
    const sameAfterReload = json(reNumbers) === json(numbers);
    obs(`after a reload (journal only): outcome ${json(await outcomeOf(reloaded))}, ${reNumbers.length} output lines, ${sameAfterReload ? 'identical to' : 'DIFFERENT from'} what was shown live`);

    return {
      fate:
        `command kept running and ended ${json(outcome)} ${exit}; runtime ${json(before.runtime)} → ${json(after.runtime)}; ` +
        `runtime workers ${runtimesBefore} → ${runtimesAfter}`,
      coverage:
        `${numbers.length}/${n} output lines, missing ${json(missing)}, ${duplicates} duplicate(s); ` +
        `after reload the journal shows ${reNumbers.length}/${n} lines`,
      uncertain: uncertain.length ? uncertain.map((u) => `${u.line}: ${u.outcome}`).join('; ') : 'none shown',
      method:
        `automatic: page replaced the controller (${noticed ? 'notice ' + json(after.notices.find((t) => /controller/.test(t)) ?? '') : 'no notice'}); ` +
        `controller restarts ${before.restarts} → ${after.restarts}; status ${json(after.status)}`,
      steps:
        outcome === 'completed' && after.status === 'Connected' && missing.length === 0 && duplicates === 0
          ? 'none (the notice can be dismissed)'
          : `check the command: it shows ${json(outcome)}, status ${json(after.status)}`,
    };
  },
};

// ---------------------------------------------------------------------------

const probe2 = {
  id: 2,
  title: 'Disconnect a client mid-turn and reopen',
  how:
    'Sends `$ echo once >> marks.txt` then `$ sleep 30` in one turn, waits until `sleep 30` is `running`, ' +
    'closes the tab (`page.close()`, which ends its workers), opens a new tab in the same browser profile ' +
    'and observes what the app restores; then sends `$ cat marks.txt` to see whether the same session and ' +
    'workspace continue.',
  async run({ browser, page, obs }) {
    await open(page);
    await send(page, '$ echo once >> marks.txt\n$ sleep 30');
    await waitOutcome(command(page, 'echo once >> marks.txt'), 'completed');
    await waitOutcome(command(page, 'sleep 30'), 'running');
    const before = await observeUi(page);
    obs(uiLine('before closing the tab', before));
    await page.close();
    obs('closed the tab mid-turn');
    const page2 = await browser.context.newPage();
    await page2.goto(BASE_URL);
    const status = await waitStatus(page2);
    obs(`reopened in the same profile: status ${json(status)}`);
    const sleep = command(page2, 'sleep 30');
    const settled = await appears(sleep.getByText(SETTLED, { exact: true }), 30_000);
    const outcome = await outcomeOf(sleep);
    const evidence = await evidenceOf(sleep);
    obs(`sleep 30: ${settled ? '' : 'not settled within 30 s: '}${json(outcome)}; evidence ${json(evidence)}`);
    const echoOutcome = await outcomeOf(command(page2, 'echo once >> marks.txt'));
    obs(`echo once >> marks.txt: ${json(echoOutcome)}`);
    const endText = transcript(page2).getByText(/did not run it again|interrupted/i);
    const ended = await appears(endText, 15_000);
    const endedWith = ended ? (await endText.first().textContent()).trim() : null;
    obs(ended ? `the turn ended with: ${json(endedWith)}` : 'no interrupted-turn text within 15 s');
    const blocks = await command(page2, 'sleep 30').count();
    const marks = await readWorkspaceFile(page2, 'marks.txt');
    obs(`blocks for "sleep 30": ${blocks}; marks.txt in OPFS: ${json(marks)}`);
    const mid = await observeUi(page2);
    obs(uiLine('after reopening', mid));
    const uncertain = await uncertainBlocks(page2);

    const { outcome: catOutcome } = await followUp(page2, 'cat marks.txt', obs);
    const after = await observeUi(page2);
    obs(uiLine('after the follow-up', after));
    const journal = await readJournal(page2);
    obs(`runtime records: ${runtimeSummary(journal)}`);
    obs(`session records: ${json(journal.session.map((s) => s.type))}; workspaces in OPFS: ${await countWorkspaces(page2)}`);
    const marksAfter = await readWorkspaceFile(page2, 'marks.txt');

    const appended = marksAfter.join('').split('once').length - 1;
    return {
      fate:
        `tab's workers ended with it; sleep 30 shown ${json(outcome)}; runtime ${json(before.runtime)} → ${json(after.runtime)}`,
      coverage:
        `completed echo still ${json(echoOutcome)}; marks.txt appended ${appended} time(s); ${blocks} block for sleep 30; ` +
        `turn end text: ${endedWith ? json(endedWith) : 'none'}`,
      uncertain: uncertain.length ? uncertain.map((u) => `${u.line}: ${u.outcome}`).join('; ') : 'none shown',
      method:
        `reopen in the same profile: new controller recovered from the journal (status ${json(status)}); ` +
        `next message "cat marks.txt" → ${json(catOutcome)} in the same workspace`,
      steps:
        catOutcome === 'completed'
          ? `reopen the app; re-send ${outcome === 'completed' ? 'nothing' : '"sleep 30" if still wanted (it was not re-run)'}; no new session needed`
          : `reopen the app; follow-up command ended ${json(catOutcome)}: ${json(after.lifecycleAlert || after.refused)}`,
    };
  },
};

// ---------------------------------------------------------------------------

const probe3 = {
  id: 3,
  title: 'Kill the runtime',
  how:
    'Sends `$ echo before > before.txt` then `$ echo tick; sleep 20`, waits until the second is `running` ' +
    'with `tick` shown, then closes the worker whose URL ends in `runtime.js`. Observes the outcome and the ' +
    'session lifecycle; clicks `Resume` if the page offers it; then sends `$ cat before.txt` to see whether a ' +
    'new command runs in the same workspace.',
  async run({ page, obs }) {
    await open(page);
    await send(page, '$ echo before > before.txt\n$ echo tick; sleep 20');
    await waitOutcome(command(page, 'echo before > before.txt'), 'completed');
    const block = command(page, 'echo tick; sleep 20');
    await waitOutcome(block, 'running');
    await block.locator('pre').filter({ hasText: 'tick' }).first().waitFor();
    const before = await observeUi(page);
    obs(uiLine('before the fault', before));
    const runtimes = workersEndingWith(page, '/runtime.js');
    if (runtimes.length === 0) throw new Error('no runtime worker visible');
    const t0 = Date.now();
    for (const runtime of runtimes) await closeWorker(runtime);
    obs(`closed ${runtimes.length} runtime worker(s)`);
    const settled = await appears(block.getByText(SETTLED, { exact: true }), 45_000);
    const outcome = await outcomeOf(block);
    const evidence = await evidenceOf(block);
    obs(`command ${settled ? `settled after ${Date.now() - t0} ms` : 'NOT settled within 45 s'}: ${json(outcome)}; evidence ${json(evidence)}; output ${json(await outputOf(block))}`);
    const turnEnd = transcript(page).getByText(/did not run it again|interrupted/i);
    if (await appears(turnEnd, 5_000)) obs(`turn text: ${json((await turnEnd.last().textContent()).trim())}`);
    const uncertain = await uncertainBlocks(page);
    // What the page offers now: a failure with Resume, or a Send that becomes usable.
    const alert = page.getByRole('region', { name: 'Recovery' }).locator('.recovery-summary').filter({ hasText: /\S/ });
    const resume = page.getByRole('region', { name: 'Recovery' }).getByRole('button', { name: 'Resume' });
    if (!(await page.getByRole('textbox', { name: 'Message' }).isDisabled())) {
      await page.getByRole('textbox', { name: 'Message' }).fill('$ cat before.txt');
    }
    const offered = await appears(resume.or(sendButton(page)).or(alert), 30_000);
    const resumeShown = offered && (await resume.count()) > 0;
    const mid = await observeUi(page);
    const failedShown = mid.lifecycleAlert !== '';
    obs(uiLine(offered ? `after ${Date.now() - t0} ms the page offers ${resumeShown ? 'Resume' : mid.messageDisabled ? 'nothing' : 'Send'}` : `${Date.now() - t0} ms after the kill: no failure, no Resume, Send still disabled (waited 30 s after the outcome)`, mid));
    const stuck = await readJournal(page);
    obs(
      `journal at this point: ${runtimeSummary(stuck)}; session records ${json(stuck.session.map((r) => r.type))}; ` +
        `lifecycle state attribute ${json(await page.locator('.lifecycle').getAttribute('data-state'))}`,
    );
    let reloaded = false;
    let method;
    if (resumeShown) {
      const t1 = Date.now();
      await resume.click();
      const cleared = await appears(page.locator('.lifecycle[data-state]:not([data-state="failed"]):not([data-state="starting"])'), 30_000);
      const resumed = await observeUi(page);
      obs(uiLine(cleared ? `after Resume (${Date.now() - t1} ms)` : 'Resume did not settle within 30 s', resumed));
      method = `clicked Resume → runtime ${json(resumed.runtime)}`;
    } else if (offered) {
      method = 'no Resume offered; sent the next message';
    } else {
      // Nothing offered: try what a user would, a reload.
      await page.reload();
      const status = await waitStatus(page).catch(() => 'never settled');
      reloaded = true;
      const ui = await observeUi(page);
      obs(uiLine(`nothing offered, so reloaded: status ${json(status)}`, ui));
      method = `nothing offered in the page; reloaded → ${json(status)}, runtime ${json(ui.runtime)}`;
    }
    const { outcome: catOutcome, output: catOutput } = await followUp(page, 'cat before.txt', obs);
    const after = await observeUi(page);
    obs(uiLine('after the follow-up', after));
    const journal = await readJournal(page);
    obs(`runtime records: ${runtimeSummary(journal)}`);
    obs(`session records: ${json(journal.session.map((s) => s.type))}; workspaces in OPFS: ${await countWorkspaces(page)}; before.txt: ${json(await readWorkspaceFile(page, 'before.txt'))}`);
    obs(`runtime workers alive now: ${workersEndingWith(page, '/runtime.js').length}`);

    return {
      fate:
        `running command ended ${json(outcome)}${settled ? '' : ' (not settled in 45 s)'}; session ${failedShown ? `failed: ${json(mid.lifecycleAlert)}` : 'showed no failure'}; ` +
        `runtime ${json(before.runtime)} → ${json(after.runtime)}`,
      coverage:
        `completed "echo before" kept; partial output ${json(await outputOf(block))} kept; before.txt ${catOutcome === 'completed' ? `readable after recovery: ${json(catOutput)}` : 'not read back'}`,
      uncertain: uncertain.length ? uncertain.map((u) => `${u.line}: ${u.outcome}`).join('; ') : `none shown (killed command: ${json(outcome)})`,
      method: `${method}; "cat before.txt" → ${json(catOutcome)}`,
      steps: resumeShown
        ? `click Resume${catOutcome === 'completed' ? '' : ' (then the next command still did not complete)'}; re-send the killed command if wanted`
        : reloaded
          ? `the page offered nothing (status ${json(mid.status)}, Send disabled); a reload ${catOutcome === 'completed' ? 'made the next command work' : `did not help: ${json(catOutcome)}`}; re-send the killed command if wanted`
          : catOutcome === 'completed'
            ? 'send the next message (it resumes the session); re-send the killed command if wanted'
            : `none offered: ${json(after.lifecycleAlert || after.refused || after.status)}`,
    };
  },
};

// ---------------------------------------------------------------------------

async function addBuiltInProfile(page, name) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = page.getByRole('dialog', { name: 'Profiles' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: 'Built-in local agent' });
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: name });
  await item.waitFor();
  return { dialog, item };
}

const probe4 = {
  id: 4,
  title: 'Lose a launch acknowledgement',
  how:
    'Waits for the first runtime to attach, saves a second built-in profile and chooses it for the session ' +
    '(`Use for this session`), which relaunches. Meanwhile the page polls IndexedDB read-only, back to back, ' +
    'for a new `runtime_assigned` record; the moment one is there the probe closes the controller worker, ' +
    'before the new runtime attached. After the page restarts the controller it reads the details pane, the ' +
    'live runtime workers and the journal\'s runtime records.',
  async run({ page, obs }) {
    // Every worker the page starts or loses, with times, to tell a second
    // launch from a replacement.
    const lifetimes = [];
    page.on('worker', (worker) => {
      const entry = { name: new URL(worker.url()).pathname.split('/').pop(), born: Date.now(), died: null };
      lifetimes.push(entry);
      worker.on('close', () => {
        entry.died = Date.now();
      });
    });
    await open(page);
    const details = page.getByRole('complementary', { name: 'Session details' });
    // The details pane is a drawer now: present, not necessarily shown.
    await details.locator('[data-field="runtime"]').filter({ hasText: /, attached$/ }).waitFor({ state: 'attached' });
    const before = await observeUi(page);
    obs(uiLine('before', before));
    const j0 = await readJournal(page);
    const known = j0.runtime.filter((r) => r.type === 'runtime_assigned').length;
    obs(`journal before: ${runtimeSummary(j0)}`);
    const { dialog, item } = await addBuiltInProfile(page, 'Probe relaunch');
    const poll = waitRuntimeAssigned(page, known, 20_000);
    await item.getByRole('button', { name: 'Use for this session' }).click();
    const found = await poll;
    if (found.timedOut) throw new Error('no new runtime_assigned record within 20 s of choosing the profile');
    const controller = workersEndingWith(page, '/controller.js')[0];
    if (!controller) throw new Error('no controller worker visible');
    const runtimesAtClose = workersEndingWith(page, '/runtime.js').length;
    const t0 = Date.now();
    await closeWorker(controller);
    const fresh = found.assigned.at(-1);
    obs(
      `new runtime_assigned seen after ${Math.round(found.ms)} ms and ${found.polls} polls: generation ${fresh.generation}, ` +
        `runtime ${short(fresh.runtime)}, lease ${short(fresh.lease)}; closed the controller ${Date.now() - t0} ms later ` +
        `with ${runtimesAtClose} runtime worker(s) alive`,
    );
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' }).catch(() => {});
    const noticed = await appears(page.getByText(/controller worker stopped/), 30_000);
    obs(noticed ? `restart notice after ${Date.now() - t0} ms` : 'no restart notice within 30 s');
    await waitStatus(page);
    const attached = await appears(details.locator('[data-field="runtime"]').filter({ hasText: /, attached$/ }), 30_000, 'attached');
    const mid = await observeUi(page);
    obs(uiLine(attached ? `runtime attached after ${Date.now() - t0} ms` : 'no runtime attached within 30 s', mid));
    obs(`runtime workers alive: ${workersEndingWith(page, '/runtime.js').length}`);

    const { outcome: echoOutcome } = await followUp(page, 'echo after > after.txt', obs);
    const after = await observeUi(page);
    obs(uiLine('after the follow-up', after));
    const liveRuntimes = workersEndingWith(page, '/runtime.js').length;
    obs(`runtime workers alive at the end: ${liveRuntimes}`);
    const at = (ms) => (ms === null ? 'still alive' : `${ms - t0 >= 0 ? '+' : ''}${ms - t0} ms`);
    obs(
      `worker lifetimes relative to the controller close: ${lifetimes
        .map((w) => `${w.name} born ${at(w.born)}, died ${at(w.died)}`)
        .join('; ')}`,
    );
    const overlapping = lifetimes
      .filter((w) => w.name === 'runtime.js')
      .some((a, i, all) => all.some((b, j) => j > i && b.born < (a.died ?? Infinity) && a.born < (b.died ?? Infinity)));
    obs(`two runtime workers ever alive at the same time: ${overlapping ? 'YES' : 'no'}`);
    const journal = await readJournal(page);
    obs(`journal after: ${runtimeSummary(journal)}`);
    obs(`session records: ${json(journal.session.map((s) => `${s.type}${s.generation ? ` g${s.generation}` : ''}`))}`);

    // Anything the page says about an unknown launch outcome, and any note
    // the session records carry about the launch.
    const unknownTexts = [
      ...new Set((await page.getByText(/unknown|adopted|rediscover|found/i).allTextContents()).map((t) => t.trim())),
    ].filter((t) => t && !/Storage is best-effort/.test(t));
    obs(`texts in the page mentioning unknown/adopted/found: ${json(unknownTexts)}`);
    const notes = journal.session.filter((r) => r.note).map((r) => `${r.type} g${r.generation}: ${r.note}`);
    obs(`notes on session records: ${json(notes)}`);
    const lease = fresh.lease;
    const records = journal.runtime.filter((r) => r.lease === lease);
    const generations = [...new Set(records.filter((r) => r.type === 'runtime_assigned').map((r) => r.generation))];
    const goneOrRetired = records.filter((r) => r.type !== 'runtime_assigned');
    const genMatch = /generation (\d+)/.exec(after.runtime);
    const attachedGen = genMatch ? Number(genMatch[1]) : null;
    let verdict;
    if (liveRuntimes > 1 || overlapping) verdict = `DUPLICATE launch observed: two runtime workers alive at once (${liveRuntimes} at the end)`;
    else if (attachedGen === fresh.generation)
      verdict = `existing run found: generation ${fresh.generation} (recorded before the kill) attached, no further launch${unknownTexts.length ? `; page says ${json(unknownTexts)}` : ''}`;
    else if (attachedGen !== null && attachedGen > fresh.generation) {
      const marks = goneOrRetired
        .filter((r) => r.generation === fresh.generation)
        .map((r) => `${r.type.replace('runtime_', '')} (${json(r.cause)})`)
        .join(' and ');
      const orphan = lifetimes.find((w) => w.name === 'runtime.js' && w.born >= t0 - 50 && w.died !== null);
      verdict =
        `generation ${fresh.generation} not rediscovered: the journal marks it ${marks || 'with nothing'}` +
        (orphan ? `; its worker (started ${at(orphan.born)}) was ended at ${at(orphan.died)}` : '') +
        `; generation ${attachedGen} launched after, never two runtime workers alive at once; ` +
        (unknownTexts.length ? `page says ${json(unknownTexts)}` : 'the page showed no unknown outcome');
    }
    else verdict = `runtime shown as ${json(after.runtime)}`;
    obs(`verdict: ${verdict}`);

    return {
      fate: `${verdict}; runtime workers alive at close ${runtimesAtClose}, at end ${liveRuntimes}`,
      coverage:
        `lease ${short(lease)} holds ${generations.length} runtime generation(s) [${generations.join(', ')}]; ` +
        `${goneOrRetired.map((r) => `${r.type.replace('runtime_', '')} g${r.generation}`).join(', ') || 'no gone/retired records'}` +
        (notes.length ? `; session notes ${json(notes)}` : ''),
      uncertain: (await uncertainBlocks(page)).map((u) => `${u.line}: ${u.outcome}`).join('; ') || 'no command was in flight; none shown',
      method:
        `automatic: controller restart (restarts ${before.restarts} → ${after.restarts}), status ${json(after.status)}; ` +
        `new notices ${json(after.notices.filter((t) => !before.notices.includes(t) && !/saved$/.test(t)))}; next command ${json(echoOutcome)}`,
      steps: echoOutcome === 'completed' ? 'none' : `the next command ended ${json(echoOutcome)}: ${json(after.lifecycleAlert || after.refused)}`,
    };
  },
};

// ---------------------------------------------------------------------------

const probe5 = {
  id: 5,
  title: 'Make storage unavailable',
  how:
    'After one completed command, opens a second connection from the page to the journal database at ' +
    '`version + 1` (no schema change). That fires `versionchange` on the controller\'s connection. ' +
    'Observes the page, tries to send another command, then reloads (the database now has a version the ' +
    'app does not know) and observes again.',
  async run({ page, obs }) {
    await open(page);
    await send(page, '$ echo before > before.txt');
    await waitOutcome(command(page, 'echo before > before.txt'), 'completed');
    const before = await observeUi(page);
    obs(uiLine('before', before));
    const j0 = await readJournal(page);
    obs(`journal before: version ${j0.version}, values per store ${json(j0.counts)}`);
    const bump = await page.evaluate(
      async ({ name, version }) => {
        const started = performance.now();
        const events = [];
        const db = await new Promise((ok, fail) => {
          const r = indexedDB.open(name, version);
          r.onblocked = () => events.push(`blocked after ${Math.round(performance.now() - started)} ms`);
          r.onupgradeneeded = (e) => events.push(`upgradeneeded ${e.oldVersion}→${e.newVersion} after ${Math.round(performance.now() - started)} ms`);
          r.onsuccess = () => ok(r.result);
          r.onerror = () => fail(r.error);
        });
        const v = db.version;
        db.close();
        return { events, version: v, ms: Math.round(performance.now() - started) };
      },
      { name: 'lifeline', version: j0.version + 1 },
    );
    obs(`second connection opened the journal at version ${bump.version} in ${bump.ms} ms: ${json(bump.events)}`);
    const t0 = Date.now();
    const stopped = page.getByText(/stopped|unavailable|storage|journal/i).filter({ hasNotText: /best-effort/ });
    const shown = await appears(
      page
        .locator('.notices')
        .getByText(/Lifeline stopped/)
        .or(page.locator('p.connection[role="status"]').filter({ hasText: /^Not connected/ })),
      15_000,
    );
    const mid = await observeUi(page);
    obs(uiLine(shown ? `failure shown after ${Date.now() - t0} ms` : 'no failure shown within 15 s', mid));
    obs(`texts mentioning stopped/unavailable/storage/journal: ${json(await stopped.allTextContents())}`);

    let tried = 'not possible: the Message box is disabled';
    if (!mid.messageDisabled) {
      await page.getByRole('textbox', { name: 'Message' }).fill('$ echo after > after.txt');
      if (await page.getByRole('button', { name: 'Send' }).isEnabled()) {
        await page.getByRole('button', { name: 'Send' }).click();
        const echo = command(page, 'echo after > after.txt');
        const appeared = await appears(echo, 10_000);
        tried = appeared ? `block shown: ${json(await outcomeOf(echo))}` : 'no block shown within 10 s';
      } else tried = 'Send disabled';
      const refused = await page.locator('#composer-refused').textContent();
      if (refused?.trim()) tried += `; refused ${json(refused.trim())}`;
    }
    obs(`trying to send "echo after > after.txt": ${tried}; after.txt in OPFS: ${json(await readWorkspaceFile(page, 'after.txt'))}`);

    await page.reload();
    const status = await page
      .locator('p.connection[role="status"]')
      .filter({ hasText: STATUS_SETTLED })
      .first()
      .waitFor({ timeout: 30_000 })
      .then(() => true, () => false);
    const failure = await appears(page.locator('.notices').getByText(/Lifeline stopped/), status ? 2_000 : 10_000);
    const reloaded = await observeUi(page);
    obs(uiLine(`after reload${status ? '' : ' (status never settled within 30 s)'}`, reloaded));
    const beforeBlock = await outcomeOf(command(page, 'echo before > before.txt'));
    const beforeFile = await readWorkspaceFile(page, 'before.txt');
    obs(`after reload the earlier command shows ${json(beforeBlock)}; before.txt in OPFS ${json(beforeFile)}`);
    const j1 = await readJournal(page);
    obs(`journal after reload: version ${j1.version}, values per store ${json(j1.counts)}`);

    return {
      fate:
        `controller ${shown ? 'stopped writing' : 'showed no stop within 15 s'}: status ${json(mid.status)}; runtime ${json(before.runtime)} → ${json(mid.runtime)}; ` +
        `after reload ${json(reloaded.status)}${failure ? ` and ${json(reloaded.notices.find((t) => /stopped/.test(t)))}` : ''}`,
      coverage:
        `IndexedDB values per store unchanged: ${json(j0.counts) === json(j1.counts) ? 'yes' : `NO: ${json(j0.counts)} → ${json(j1.counts)}`}; ` +
        `after reload the earlier command is ${beforeBlock === null ? 'not shown (journal not read)' : json(beforeBlock)}; before.txt in OPFS: ${json(beforeFile)}`,
      uncertain: `none in flight; sending afterwards: ${tried}`,
      method: `${mid.notices.length > before.notices.length ? `notice ${json(mid.notices.at(-1))}` : 'no new notice'}; reload → ${json(reloaded.status)}`,
      steps:
        reloaded.status === 'Connected'
          ? 'reload the page'
          : `reload does not recover (${json(reloaded.status)}); the journal database (now version ${j1.version}) needs manual repair or deletion`,
    };
  },
};

export const probes = [probe1, probe2, probe3, probe4, probe5];
