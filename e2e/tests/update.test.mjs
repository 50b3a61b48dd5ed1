// A new build replaces the old one cleanly: while a page of the old build is
// open it keeps getting old assets; once it is gone the new build's cache is
// the only one left. Runs against a scratch copy of the bundle that the test
// rewrites to play the part of a new deployment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VIEWPORTS, openBrowser, waitConnected, waitServiceWorkerReady } from '../lib/browser.mjs';

const SCRATCH_URL = process.env.LIFELINE_SCRATCH_URL;
const SCRATCH_DIR = process.env.LIFELINE_SCRATCH_DIR;
const DIST = process.env.LIFELINE_DIST;

const cacheNames = (page) =>
  page.evaluate(async () => (await caches.keys()).filter((name) => name.startsWith('lifeline-')));
const servedStyle = (page) => page.evaluate(async () => (await fetch('./style.css')).text());

test('a new build replaces the old cache without mixing assets', { skip: !SCRATCH_DIR }, async () => {
  await cp(DIST, SCRATCH_DIR, { recursive: true });
  const browser = await openBrowser(VIEWPORTS.desktop);
  try {
    let page = browser.page;
    await page.goto(SCRATCH_URL);
    await waitServiceWorkerReady(page);
    // The first install claims the page that installed it.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await waitConnected(page);
    const [oldCache] = await cacheNames(page);
    assert.match(oldCache, /^lifeline-[0-9a-f]{16}$/);
    const oldStyle = await servedStyle(page);

    // Deploy "build B": a changed asset and a service worker with a new version.
    const sw = join(SCRATCH_DIR, 'sw.js');
    const oldVersion = oldCache.slice('lifeline-'.length);
    const newVersion = 'b'.repeat(16);
    await writeFile(sw, (await readFile(sw, 'utf8')).replace(oldVersion, newVersion));
    await appendFile(join(SCRATCH_DIR, 'style.css'), '\n/* build B */\n');

    await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.ready;
      await registration.update();
    });
    await page.waitForFunction(async () => {
      const registration = await navigator.serviceWorker.getRegistration();
      return registration?.waiting?.state === 'installed';
    });
    // The open page of build A still gets build A's bytes.
    assert.equal(await servedStyle(page), oldStyle);
    assert.deepEqual((await cacheNames(page)).sort(), [oldCache, `lifeline-${newVersion}`].sort());

    // Once no page of build A is left, build B takes over alone. Closing a
    // page releases its client asynchronously, so a navigation can still be
    // claimed by the old worker; observe, and open again if it was.
    await page.close();
    let caches = [];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      page = await browser.context.newPage();
      // One CI run saw this navigation never reach `load` while build B was
      // activating (not root-caused; see the closing note of issues 5–6).
      // A stalled navigation is retried like one claimed by the old worker;
      // the assertion below still requires build B alone in the end.
      const loaded = await page
        .goto(SCRATCH_URL, { timeout: 10_000 })
        .then(() => true)
        .catch(() => false);
      if (!loaded) {
        await page.close();
        continue;
      }
      await waitServiceWorkerReady(page);
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
      caches = await cacheNames(page);
      if (caches.length === 1 && caches[0] === `lifeline-${newVersion}`) break;
      await page.close();
    }
    assert.deepEqual(caches, [`lifeline-${newVersion}`]);
    assert.match(await servedStyle(page), /build B/);
    await waitConnected(page);
  } finally {
    await browser.close();
  }
});
