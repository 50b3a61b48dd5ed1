// The composer while a turn runs (issue 13, item 3): Enter sends,
// Shift+Enter adds a line, Send queues a message behind the running turn,
// a queued message can be cancelled, and the queue runs in order after the
// turn; the queue is gone once it ran. At 1280×800 and 390×844.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VIEWPORTS, openApp } from '../lib/browser.mjs';
import { commandBlock, loadDetails, transcript } from '../lib/ui.mjs';

// LIFELINE_SCREENSHOTS=<dir> saves the composer with its queue there (for
// the user guide); CI does not set it.
const SHOTS = process.env.LIFELINE_SCREENSHOTS;

const queue = (page) => page.getByRole('list', { name: 'Queued messages' });
const queued = (page, text) => queue(page).getByRole('listitem').filter({ hasText: text });

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`composer at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('type ahead: queued in order, one cancelled, the rest run after the turn', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        const box = page.getByRole('textbox', { name: 'Message' });
        const send = page.getByRole('button', { name: 'Send' });
        await page.getByText('Enter sends · Shift+Enter adds a line').waitFor();

        // Shift+Enter adds a line and sends nothing.
        await box.fill('first line');
        await box.press('Shift+Enter');
        await box.pressSequentially('second line');
        assert.equal(await box.inputValue(), 'first line\nsecond line');
        assert.equal(await transcript(page).getByText('first line').count(), 0);

        // Enter sends.
        await box.fill('$ sleep 8');
        await box.press('Enter');
        await commandBlock(page, 'sleep 8').getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
        assert.equal(await box.inputValue(), '', 'the box is emptied once sent');

        // While it runs, Send queues (by button and by Enter), in order.
        await page.getByText('Enter queues it after the running turn · Shift+Enter adds a line').waitFor();
        await box.fill('$ echo queued-one');
        assert.ok(await send.isEnabled(), 'Send is enabled while a command runs');
        await send.click();
        await box.fill('$ echo queued-two');
        await box.press('Enter');
        await queued(page, 'queued-two').waitFor();
        const items = await queue(page).getByRole('listitem').allTextContents();
        assert.equal(items.length, 2);
        assert.match(items[0], /queued.*\$ echo queued-one/);
        assert.match(items[1], /queued.*\$ echo queued-two/);
        if (SHOTS) {
          await mkdir(SHOTS, { recursive: true });
          await page.screenshot({ path: join(SHOTS, `queue-${vname}.png`) });
        }
        const { violations } = await new AxeBuilder({ page }).include('.composer').analyze();
        assert.deepEqual(violations.map((v) => v.id), []);

        // Cancel the second one: it leaves the queue and never runs.
        await queued(page, 'queued-two').getByRole('button', { name: 'Cancel' }).click();
        await queued(page, 'queued-two').waitFor({ state: 'detached' });
        assert.equal(await queue(page).getByRole('listitem').count(), 1);
        assert.equal(
          await commandBlock(page, 'echo queued-one').count(),
          0,
          'the queued message waits for the running turn',
        );

        // The running command completes, then the queued one runs.
        await commandBlock(page, 'sleep 8').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        await commandBlock(page, 'echo queued-one').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        // The queue is gone with what it held, and no notice outlives it.
        await queue(page).waitFor({ state: 'detached' });
        assert.equal(await page.getByText(/waits for the agent/).count(), 0);
        await page.getByText('Enter sends · Shift+Enter adds a line').waitFor();
        // The cancelled one never ran.
        assert.equal(await commandBlock(page, 'echo queued-two').count(), 0);
        assert.equal(await transcript(page).getByText('$ echo queued-two').count(), 0);

        const all = await new AxeBuilder({ page }).analyze();
        assert.deepEqual(all.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(', ')}`), []);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a Cancel held down while status lines arrive is not lost', async () => {
      // The queue is built again with each status line, but as the same
      // elements: the button pressed is the one released on. (A list built
      // anew would lose the click, as the transcript once did.)
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        // The journal's position, in the details pane, tells when a status line came.
        await loadDetails(page);
        const box = page.getByRole('textbox', { name: 'Message' });
        // One turn: a pause, output (an event and a status line each), a
        // long pause during which the queued message still waits.
        await box.fill('$ sleep 1\n$ seq 1 2000\n$ sleep 30');
        await box.press('Enter');
        await commandBlock(page, 'sleep 1').getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
        await box.fill('$ echo never');
        await box.press('Enter');
        const cancel = queued(page, 'echo never').getByRole('button', { name: 'Cancel' });
        await cancel.waitFor();
        const position = page.locator('[data-field="position"]');
        const before = await position.textContent();
        const at = await cancel.boundingBox();
        await page.mouse.move(at.x + at.width / 2, at.y + at.height / 2);
        await page.mouse.down();
        await page.waitForFunction(
          (was) => document.querySelector('[data-field="position"]').textContent !== was,
          before,
          { timeout: 30_000 },
        );
        await page.mouse.up();
        // Withdrawn by the click: the turn runs for 30 s more, and only
        // then would the queued message have left the queue by running.
        await queued(page, 'echo never').waitFor({ state: 'detached', timeout: 5_000 });
        await commandBlock(page, 'sleep 30').getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
        await page.getByRole('button', { name: 'Stop' }).click();
        await commandBlock(page, 'sleep 30').getByText(/cancelled|interrupted/).waitFor({ timeout: 30_000 });
        assert.equal(await commandBlock(page, 'echo never').count(), 0);
      } finally {
        await browser.close();
      }
    });
  });
}
