// German is not in the page's wasm: its texts are a bundle asset
// (i18n/de.json) fetched when a reader chooses German or the browser
// prefers it, precached by the service worker. A missing or corrupt asset
// leaves the page in English and says so.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected, waitServiceWorkerReady } from '../lib/browser.mjs';

const UNAVAILABLE = 'The German texts could not be loaded, so Lifeline stays in English. Reload to try again.';

async function noAxeViolations(page, where) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(
    violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe-core on ${where}`,
  );
}

/** Answers the German asset with `reply` (Playwright's route.fulfill
 * options); with the service worker blocked, so every fetch is seen. */
async function brokenGerman(viewport, reply, options = {}) {
  const browser = await openBrowser(viewport, { serviceWorkers: 'block', ...options });
  let asked = 0;
  await browser.context.route('**/i18n/de.json', (route) => {
    asked += 1;
    return route.fulfill(reply);
  });
  return { browser, asked: () => asked };
}

describe('German at 1280×800 (desktop)', () => {
  test('choosing Deutsch fetches the German texts, and they work offline after a reload', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page, context } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await waitServiceWorkerReady(page);
      await page.getByRole('combobox', { name: 'Language' }).selectOption({ label: 'Deutsch' });
      await page.locator('html[lang="de"]').waitFor({ state: 'attached' });
      await page.getByRole('log', { name: 'Verlauf' }).waitFor();
      await page.getByRole('combobox', { name: 'Sprache' }).waitFor();
      assert.equal(await page.getByRole('log', { name: 'Transcript' }).count(), 0, 'no English left');
      await noAxeViolations(page, 'the German page');

      await context.setOffline(true);
      try {
        await page.reload();
        await page.locator('html[lang="de"]').waitFor({ state: 'attached' });
        await page.getByRole('log', { name: 'Verlauf' }).waitFor();
        assert.equal(await page.getByRole('combobox', { name: 'Sprache' }).inputValue(), 'de');
        assert.equal(await page.getByText(UNAVAILABLE).count(), 0);
      } finally {
        await context.setOffline(false);
      }
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });

  test('an asset written for another key list is refused: the page stays in English and says so', async () => {
    const { browser, asked } = await brokenGerman(VIEWPORTS.desktop, {
      status: 200,
      contentType: 'application/json',
      body: '[1, "Sitzungen"]',
    });
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await page.getByRole('combobox', { name: 'Language' }).selectOption({ label: 'Deutsch' });
      await page.getByText(UNAVAILABLE, { exact: true }).waitFor();
      assert.equal(asked(), 1);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      await page.getByRole('log', { name: 'Transcript' }).waitFor();
      // The select says what is shown, not what was asked for.
      assert.equal(await page.getByRole('combobox', { name: 'Language' }).inputValue(), 'en');
      await noAxeViolations(page, 'the German-unavailable notice');
    } finally {
      await browser.close();
    }
  });
});

describe('German at 390×844 (phone)', () => {
  test('a browser that prefers German gets German without choosing it', async () => {
    const browser = await openBrowser(VIEWPORTS.phone, { locale: 'de-DE' });
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await page.locator('html[lang="de"]').waitFor({ state: 'attached' });
      await page.getByRole('log', { name: 'Verlauf' }).waitFor();
      await page.getByRole('status').filter({ hasText: /^Verbunden$/ }).waitFor();
      assert.equal(await page.getByText(UNAVAILABLE).count(), 0);
      await noAxeViolations(page, 'the German page on a phone');
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });

  test('a missing asset leaves a German-preferring browser in English, and says so', async () => {
    const { browser, asked } = await brokenGerman(VIEWPORTS.phone, { status: 404, body: '' }, { locale: 'de-DE' });
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await page.getByText(UNAVAILABLE, { exact: true }).waitFor();
      await waitConnected(page);
      assert.equal(asked(), 1);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      await page.getByRole('log', { name: 'Transcript' }).waitFor();
      await noAxeViolations(page, 'the German-unavailable notice on a phone');
    } finally {
      await browser.close();
    }
  });
});
