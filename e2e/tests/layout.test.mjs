// The page's layout and its notices (issue 13, items 4 and 6), at 1280×800
// and 390×844: a one-row header with the connection state in it, drawers
// that close by their button, Escape and a tap outside and give focus back,
// the details pane's controls inside it, internals under "Technical
// details", and a storage notice whose dismissal survives a reload.
// With LIFELINE_SCREENSHOTS=<dir> it also saves the main screens there
// (docs/screenshots for the user guide); CI does not set it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { VIEWPORTS, openApp, waitConnected } from '../lib/browser.mjs';
import { commandBlock, loadDetails, send } from '../lib/ui.mjs';

const SHOTS = process.env.LIFELINE_SCREENSHOTS;

async function shot(page, name) {
  if (!SHOTS) return;
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

async function axe(page) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(', ')}`), []);
}

/** The toggle that opened a drawer has focus again. */
async function focusIsOn(page, controls) {
  await page.waitForFunction(
    (id) => document.activeElement?.getAttribute('aria-controls') === id,
    controls,
  );
}

const storageNotice = (page) => page.locator('.notice').filter({ hasText: 'Storage is best-effort' });

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  const phone = vname === 'phone';
  describe(`layout at ${viewport.width}×${viewport.height} (${vname})`, () => {
    let browser;
    before(async () => {
      browser = await openApp(viewport);
    });
    after(async () => browser?.close());

    test('the header is one row of at most 56 px and states the connection', async () => {
      const { page } = browser;
      const header = page.locator('header.topbar');
      const box = await header.boundingBox();
      assert.ok(box.height <= 56, `the header is ${box.height}px high`);
      await header.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
      await send(page, '$ echo hello > notes.txt && ls');
      await commandBlock(page, 'echo hello > notes.txt && ls').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
      await shot(page, `chat-${vname}`);
    });

    test('the session list closes by its button, Escape and a tap outside, giving focus back', async () => {
      const { page } = browser;
      const sessions = page.getByRole('navigation', { name: 'Sessions' });
      if (!phone) {
        // Beside the chat on a desktop: nothing to open or close.
        assert.ok(await sessions.isVisible());
        return;
      }
      const toggle = page.getByRole('button', { name: 'Sessions', exact: true });
      const ways = [
        ['button', () => sessions.getByRole('button', { name: 'Close sessions' }).click()],
        ['Escape', () => page.keyboard.press('Escape')],
        ['tap outside', () => page.mouse.click(viewport.width - 20, viewport.height / 2)],
      ];
      for (const [way, close] of ways) {
        await toggle.click();
        await sessions.waitFor();
        if (way === 'button') {
          await shot(page, `sessions-${vname}`);
          await axe(page);
        }
        await close();
        await sessions.waitFor({ state: 'hidden' });
        await focusIsOn(page, 'sessions');
        assert.ok(true, way);
      }
    });

    test('the details pane: a drawer on a phone, its controls inside it, internals tucked away', async () => {
      const { page } = browser;
      const details = page.getByRole('complementary', { name: 'Session details' });
      const toggle = page.getByRole('button', { name: 'Session details' });
      if (phone) {
        const ways = [
          ['button', () => details.getByRole('button', { name: 'Close details' }).click()],
          ['Escape', () => page.keyboard.press('Escape')],
          ['tap outside', () => page.mouse.click(20, viewport.height / 2)],
        ];
        for (const [way, close] of ways) {
          await toggle.click();
          await details.waitFor();
          await close();
          await details.waitFor({ state: 'hidden' });
          await focusIsOn(page, 'details');
          assert.ok(true, way);
        }
        await toggle.click();
        await details.waitFor();
      }
      const pane = await details.boundingBox();
      const inside = async (locator, what) => {
        const b = await locator.boundingBox();
        assert.ok(b.x >= pane.x - 0.5 && b.x + b.width <= pane.x + pane.width + 0.5, `${what} sticks out of the pane`);
      };
      await inside(details.getByLabel('Import evidence'), 'Import evidence');
      const select = details.getByRole('combobox', { name: 'Environment' });
      await inside(select, 'Environment');
      // The chosen environment's name is not cut off.
      const fits = await select.evaluate((el) => {
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = getComputedStyle(el).font;
        const text = el.selectedOptions[0].textContent;
        return ctx.measureText(text).width + 32 <= el.clientWidth;
      });
      assert.ok(fits, 'the environment name fits its selector');

      // Journal position and the like are behind one disclosure.
      const position = details.locator('[data-field="position"]');
      assert.equal(await position.isVisible(), false);
      await details.getByText('Technical details').click();
      await position.waitFor();
      await shot(page, `details-${vname}`);
      await axe(page);
      await details.getByText('Technical details').click();
      if (phone) {
        await page.keyboard.press('Escape');
        await details.waitFor({ state: 'hidden' });
      }
    });

    test('the Profiles dialog closes by its button, Escape and (beside it) a tap outside', async () => {
      const { page } = browser;
      const open = page.getByRole('button', { name: 'Profiles' });
      const dialog = page.getByRole('dialog', { name: 'Profiles' });
      const ways = [
        ['button', () => dialog.getByRole('button', { name: 'Close', exact: true }).click()],
        ['Escape', () => page.keyboard.press('Escape')],
      ];
      // On a phone it fills the screen: there is no outside to tap.
      if (!phone) ways.push(['tap outside', () => page.mouse.click(5, viewport.height - 5)]);
      for (const [way, close] of ways) {
        await open.click();
        await dialog.waitFor();
        await close();
        await dialog.waitFor({ state: 'hidden' });
        await page.waitForFunction(() => document.activeElement?.classList.contains('profiles-open'));
        assert.ok(true, way);
      }
    });

    test('the storage notice can be dismissed, and stays dismissed after a reload', async () => {
      const { page } = browser;
      const notice = storageNotice(page);
      await notice.waitFor();
      const box = await notice.boundingBox();
      const log = await page.getByRole('log', { name: 'Transcript' }).boundingBox();
      assert.ok(box.y + box.height <= log.y + 0.5, 'the notice sits above the transcript, never over it');
      await notice.getByRole('button', { name: 'Dismiss' }).click();
      await notice.waitFor({ state: 'detached' });
      await page.reload();
      await waitConnected(page);
      await loadDetails(page);
      // The storage line is known once the status arrived: the notice would
      // be back by then if it were going to be.
      await page.locator('[data-field="storage"]').filter({ hasText: /best-effort|not persistent/i }).waitFor({ state: 'attached' });
      assert.equal(await storageNotice(page).count(), 0);
      await axe(page);
      assert.deepEqual(browser.errors, []);
    });
  });
}
