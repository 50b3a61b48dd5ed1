// Watching the runtime worker in a real browser: a runtime that dies is
// noticed within 2 s through its own end (the Web Lock it holds for its
// life, released by the browser when the worker ends; the MessagePort
// `close` event is not in this Chromium: `'onclose' in
// MessagePort.prototype` is false, checked below); one that
// is alive but stuck is "not responding" and can be stopped; and a claim
// posted to the controller from the page does not settle anything about a
// runtime that has its own port. Everything waits on what the page shows;
// the elapsed times are measured and printed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { commandBlock, send, waitOutcome } from '../lib/ui.mjs';

/** The longest a dead runtime may go unnoticed (issue 12). */
const DETECT_MS = 2_000;

function runtimeWorker(page) {
  const workers = page.workers().filter((w) => w.url().includes('runtime'));
  assert.equal(workers.length, 1, 'one runtime worker is visible to the test');
  return workers[0];
}

/** Records every text the connection status line shows from now on. */
async function watchConnection(page) {
  await page.evaluate(() => {
    const line = document.querySelector('.connection');
    const seen = (window.__connection = [line.textContent]);
    new MutationObserver(() => seen.push(line.textContent)).observe(line, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
  return () => page.evaluate(() => window.__connection);
}

/**
 * Test-only, before the app loads: keeps the page's Worker objects and the
 * ports it relays, so the test can post to the controller exactly as any
 * script in the page could.
 */
async function recordWorkers(page) {
  await page.addInitScript(() => {
    const seen = (window.__lifeline = { controllers: [], ports: [] });
    const Original = window.Worker;
    window.Worker = class extends Original {
      constructor(url, options) {
        super(url, options);
        if (String(url).includes('controller')) seen.controllers.push(this);
      }
      postMessage(message, ...rest) {
        if (typeof message === 'string' && message.includes('"runtime_port"')) {
          // The page's messages are externally tagged: {"runtime_port": {…}}.
          seen.ports.push(JSON.parse(message).runtime_port);
        }
        return super.postMessage(message, ...rest);
      }
    };
  });
}

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  describe(`runtime watch at ${viewport.width}×${viewport.height} (${name})`, () => {
    test('a runtime worker that dies mid-command is shown lost within 2 s', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ sleep 30');
        const block = commandBlock(page, 'sleep 30');
        await waitOutcome(block, 'running');
        const connection = await watchConnection(page);

        const runtime = runtimeWorker(page);
        const killed = Date.now();
        // Test-only: the worker closes itself, as a crash would end it. The
        // page gets no `error` event for this and heartbeats alone would only
        // make it "not responding": only the worker's own end can tell.
        const closeEvent = await runtime.evaluate(() => 'onclose' in MessagePort.prototype);
        await runtime.evaluate(() => setTimeout(() => self.close(), 0));
        await waitOutcome(block, 'lost', 10_000);
        const detected = Date.now() - killed;
        console.log(
          `runtime-watch: ${name}: worker closed → command shown lost in ${detected} ms (MessagePort close event: ${closeEvent})`,
        );
        assert.ok(detected < DETECT_MS, `noticed after ${detected} ms`);

        // The controller was fine all along: the header never said otherwise.
        await waitConnected(page);
        const texts = await connection();
        assert.deepEqual(
          texts.filter((t) => t !== 'Connected'),
          [],
          `the status line said ${JSON.stringify(texts)}`,
        );
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a runtime stuck in a busy loop is "not responding", not lost, until it is stopped', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ sleep 60');
        const block = commandBlock(page, 'sleep 60');
        await waitOutcome(block, 'running');

        const runtime = runtimeWorker(page);
        const stuck = Date.now();
        // Test-only: what a `js` command with an endless loop does to the
        // worker: its event loop is blocked, no heartbeats, its port open.
        await runtime.evaluate(() =>
          setTimeout(() => {
            for (;;) {
              /* busy */
            }
          }, 0),
        );
        const alert = page.getByRole('alert').filter({ hasText: 'The runtime is not responding.' });
        await alert.waitFor({ timeout: 10_000 });
        console.log(`runtime-watch: ${name}: busy loop → "not responding" shown in ${Date.now() - stuck} ms`);
        // Silent is not dead: the command still runs and the controller is fine.
        await waitOutcome(block, 'running', 1_000);
        assert.equal(await block.getByText('lost', { exact: true }).count(), 0);
        await waitConnected(page);

        const terminated = new Promise((resolve) => runtime.once('close', resolve));
        const stopped = Date.now();
        await alert.getByRole('button', { name: 'Stop runtime' }).click();
        await waitOutcome(block, 'lost', 10_000);
        console.log(`runtime-watch: ${name}: Stop runtime → command shown lost in ${Date.now() - stopped} ms`);
        await alert.waitFor({ state: 'detached' });
        await terminated;
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a grep pattern that backtracks without end is "not responding" until stopped, and the session goes on', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        // grep's patterns run on the browser's RegExp, which backtracks:
        // this one takes about 2^40 steps over a line of 40 `a`s.
        const write = `echo ${'a'.repeat(40)} > a.txt`;
        await send(page, `$ ${write}`);
        await waitOutcome(commandBlock(page, write), 'completed');
        const line = "grep -E '(a+)+b' a.txt";
        await send(page, `$ ${line}`);
        const block = commandBlock(page, line);
        const alert = page.getByRole('alert').filter({ hasText: 'The runtime is not responding.' });
        await alert.waitFor({ timeout: 10_000 });
        await waitOutcome(block, 'running', 1_000);
        assert.equal(await block.getByText('lost', { exact: true }).count(), 0);

        await alert.getByRole('button', { name: 'Stop runtime' }).click();
        await waitOutcome(block, 'lost', 10_000);
        await alert.waitFor({ state: 'detached' });
        // A message resumes the session on a new runtime, with the file.
        await send(page, '$ grep -c a a.txt');
        await waitOutcome(commandBlock(page, 'grep -c a a.txt'), 'completed');
        await commandBlock(page, 'grep -c a a.txt').getByText(/^1$/m).first().waitFor();
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a RuntimeExited posted to the controller from the page leaves the running command running', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await recordWorkers(page);
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ sleep 3');
        const block = commandBlock(page, 'sleep 3');
        await waitOutcome(block, 'running');

        // Any script in the page can reach the controller worker; it forges
        // the page's report that this runtime crashed, naming it exactly.
        const forged = await page.evaluate(() => {
          const { controllers, ports } = window.__lifeline;
          const { runtime, generation } = ports.at(-1);
          controllers.at(-1).postMessage(
            JSON.stringify({ runtime_exited: { runtime, generation, crashed: true, detail: 'forged by a page script' } }),
          );
          return { runtime, generation };
        });
        assert.ok(forged.runtime, 'the forged claim names the running runtime');

        // Believed, it would end the command as lost at once; instead the
        // command runs to its end on the runtime's own word.
        await waitOutcome(block, 'completed', 30_000);
        assert.equal(await block.getByText('lost', { exact: true }).count(), 0);
        await waitConnected(page);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
