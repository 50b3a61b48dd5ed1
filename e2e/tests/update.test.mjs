// A new build replaces the old one cleanly: while a page of the old build is
// open it keeps getting old assets; once it is gone the new build's cache is
// the only one left. Runs against a scratch copy of the bundle that the test
// rewrites to play the part of a new deployment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, writeFile, appendFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { VIEWPORTS, openBrowser, waitConnected, waitServiceWorkerReady } from '../lib/browser.mjs';

const SCRATCH_URL = process.env.LIFELINE_SCRATCH_URL;
const SCRATCH_DIR = process.env.LIFELINE_SCRATCH_DIR;
const DIST = process.env.LIFELINE_DIST;

const cacheNames = (page) =>
  page.evaluate(async () => (await caches.keys()).filter((name) => name.startsWith('lifeline-')));
const servedStyle = (page) => page.evaluate(async () => (await fetch('./style.css')).text());

test('a new build replaces the old cache without mixing assets', { skip: !SCRATCH_DIR }, async () => {
  await cp(DIST, SCRATCH_DIR, { recursive: true });
  // Build A's style.css dated a minute back, so that build B's, written
  // below, never has the same `Last-Modified` second (the server's
  // validator counts whole seconds): within one second a revalidation
  // keeps build A's copy, which the half-deployed worker below, naming
  // build A's digest, would then rightly cache, and there would be nothing
  // to refuse.
  const past = Date.now() / 1000 - 60;
  await utimes(join(SCRATCH_DIR, 'style.css'), past, past);
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

    // Deploy "build B": a changed asset and a service worker with a new
    // version. First half-deployed: the new worker, whose digest for
    // style.css is still build A's, while the server already has build B's
    // file. Its install fails rather than cache a mix of the two builds.
    const sw = join(SCRATCH_DIR, 'sw.js');
    const oldVersion = oldCache.slice('lifeline-'.length);
    const oldSw = await readFile(sw, 'utf8');
    const style = join(SCRATCH_DIR, 'style.css');
    const digest = async () => `sha256-${createHash('sha256').update(await readFile(style)).digest('base64')}`;
    const oldDigest = await digest();
    assert.ok(oldSw.includes(`"./style.css":"${oldDigest}"`), 'sw.js records style.css by its digest');
    await appendFile(style, '\n/* build B */\n');
    // Asks for the new worker and follows it until its install is over:
    // "installed" (waiting), or "redundant" when the install failed.
    const update = () =>
      page.evaluate(async () => {
        const registration = await navigator.serviceWorker.ready;
        const found = new Promise((resolve) =>
          registration.addEventListener('updatefound', () => resolve(registration.installing), { once: true }),
        );
        await registration.update();
        const worker = await found;
        while (worker.state === 'parsed' || worker.state === 'installing') {
          await new Promise((resolve) => worker.addEventListener('statechange', resolve, { once: true }));
        }
        return worker.state;
      });
    await writeFile(sw, oldSw.replace(oldVersion, 'a'.repeat(16)));
    assert.equal(await update(), 'redundant', 'a worker whose assets do not match its digests is not installed');
    assert.deepEqual(await cacheNames(page), [oldCache]);

    // Then whole: the digest that matches the server's file.
    const newVersion = 'b'.repeat(16);
    await writeFile(sw, oldSw.replace(oldVersion, newVersion).replace(oldDigest, await digest()));
    assert.equal(await update(), 'installed');
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
