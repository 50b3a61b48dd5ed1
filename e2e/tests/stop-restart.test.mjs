// One press of Stop ends both a pending runtime restart and the turn that
// was active when it began: the controller worker dies mid-command, the new
// one waits to rejoin the runtime (its port held back by the test), and
// Stop ends the wait and the turn; what the page shows afterwards says so,
// nothing more of the turn runs, and the composer takes the next message.
// At 1280×800 and 390×844, synchronised on what the page shows.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, closeWorker, openBrowser, waitConnected } from '../lib/browser.mjs';
import { commandBlock as block, send, transcript } from '../lib/ui.mjs';

/**
 * Test-only, before the app loads: while `window.__holdPorts` is set, the
 * runtime ports the page hands a controller are kept back, so a new
 * controller waits to rejoin its runtime; `window.__releasePorts()` hands
 * them over.
 */
async function holdRuntimePorts(page) {
  await page.addInitScript(() => {
    const held = [];
    window.__holdPorts = false;
    const Original = window.Worker;
    window.Worker = class extends Original {
      constructor(url, options) {
        super(url, options);
        this.__controller = String(url).includes('controller');
      }
      postMessage(message, ...rest) {
        if (
          this.__controller &&
          window.__holdPorts &&
          typeof message === 'string' &&
          message.includes('"runtime_port"')
        ) {
          held.push(() => super.postMessage(message, ...rest));
          return;
        }
        return super.postMessage(message, ...rest);
      }
    };
    window.__releasePorts = () => {
      window.__holdPorts = false;
      for (const post of held.splice(0)) post();
    };
  });
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`Stop during a runtime restart at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('one press ends the pending restart and the active turn; the composer takes the next message', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await holdRuntimePorts(page);
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ sleep 30\n$ echo after >> after.txt');
        await block(page, 'sleep 30').getByText('running', { exact: true }).waitFor({ timeout: 30_000 });

        // The controller dies; its successor must rejoin the runtime, whose
        // port is held back: the restart stays pending, the turn active.
        await page.evaluate(() => {
          window.__holdPorts = true;
        });
        await closeWorker(page, 'controller');
        const lifecycle = page.locator('.lifecycle-line');
        await lifecycle.getByText('Starting the session…').waitFor({ timeout: 30_000 });
        const stop = page.getByRole('button', { name: 'Stop' });
        assert.ok(await stop.isEnabled(), 'Stop is enabled while the restart is pending');
        await stop.click();

        // The turn ends, and says how; the restart is no longer pending.
        const reply = transcript(page).locator('.turn .reply');
        await reply.first().waitFor({ timeout: 30_000 });
        await lifecycle.getByText('Starting the session…').waitFor({ state: 'detached', timeout: 30_000 });
        const status = await reply.first().getAttribute('data-status');
        assert.ok(['cancelled', 'interrupted'].includes(status), `the turn ended ${status}`);
        const sleep = block(page, 'sleep 30');
        assert.equal(await sleep.getByText('running', { exact: true }).count(), 0, 'sleep 30 no longer runs');
        console.log(
          `stop-restart: ${vname}: turn ${status}: ${await reply.first().locator('.reply-text').textContent()} | sleep 30: ${await sleep.locator('.outcome, [data-outcome]').first().textContent().catch(() => '?')}`,
        );
        assert.equal(await block(page, 'echo after >> after.txt').count(), 0, 'nothing more of the turn ran');
        await page.waitForFunction(
          () => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Stop')?.disabled,
          null,
          { timeout: 30_000 },
        );

        // The composer takes the next message, and it runs.
        await page.evaluate(() => window.__releasePorts());
        const box = page.getByRole('textbox', { name: 'Message' });
        assert.ok(await box.isEnabled(), 'the message box is enabled');
        await box.fill('$ echo next >> next.txt');
        await page.waitForFunction(
          () => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Send')?.disabled === false,
          null,
          { timeout: 30_000 },
        );
        await page.getByRole('button', { name: 'Send' }).click();
        await block(page, 'echo next >> next.txt')
          .getByText('completed', { exact: true })
          .waitFor({ timeout: 60_000 });
        assert.equal(await block(page, 'echo after >> after.txt').count(), 0, 'the stopped turn stayed stopped');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
