// Launching Debian's Chromium through playwright-core, the way every test
// here needs it: headless, no network chatter, a fresh profile each time
// (a persistent context, because the default one reports `in-incognito` to
// the installability check).
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BASE_URL = process.env.LIFELINE_URL ?? 'http://127.0.0.1:8080/';

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
};

/** Chromium's flags for every test, the soak and the probes. */
export const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Opens a fresh browser profile; call `close()` when done. `options`
 * adds Playwright context options (`locale`, `serviceWorkers`). */
export async function openBrowser(viewport, options = {}) {
  const profile = await mkdtemp(join(tmpdir(), 'lifeline-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ARGS,
    viewport,
    hasTouch: viewport.width < 640,
    isMobile: false,
    ...options,
  });
  const errors = [];
  // The workers' warnings (the controller logs what it refused and why)
  // are kept for a failing test to print; the newest 100 are enough.
  const warnings = [];
  context.on('weberror', (error) => errors.push(String(error.error())));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
    if (message.type() === 'warning') {
      warnings.push(message.text());
      if (warnings.length > 100) warnings.shift();
    }
  });
  return {
    context,
    page,
    errors,
    warnings,
    /** The profile's folder (the bench finds the browser's processes by it). */
    profile,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Whether `errors` (a browser's, from `openBrowser`) hold a refused fetch
 * of a split module, as the browser and the loader log it, and nothing
 * else: a test that refuses one expects those and no other error. */
export function onlyRefusedFetches(errors) {
  return errors.length > 0 && errors.every((e) => /ERR_INTERNET_DISCONNECTED|Failed to fetch/.test(e));
}

/** Opens a fresh browser profile on the app and waits until it is
 * Connected; `prepare(browser)`, if given, runs (and is awaited: a
 * route it sets is in place) before the page loads. Call `close()` when
 * done. */
export async function openApp(viewport, prepare) {
  const browser = await openBrowser(viewport);
  try {
    await prepare?.(browser);
    await browser.page.goto(BASE_URL);
    await waitConnected(browser.page);
  } catch (error) {
    await browser.close();
    throw error;
  }
  return browser;
}

/** Waits until the status line says the worker round trip succeeded. */
export async function waitConnected(page) {
  const status = page.getByRole('status').filter({ hasText: /^(Connected|Not connected.*)$/ });
  await status.waitFor();
  const text = await status.textContent();
  if (text !== 'Connected') throw new Error(`expected Connected, got: ${text}`);
}

/** Resolves once a service worker controls the page's scope and is active. */
export async function waitServiceWorkerReady(page) {
  await page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    return registration.active.state;
  });
}

/**
 * Test-only: the worker whose URL contains `part` closes itself, as a crash
 * would end it, and this resolves once it is gone. Nothing in the app
 * offers this; the page notices a closed controller only through its
 * missed heartbeats.
 */
export async function closeWorker(page, part) {
  const worker = page.workers().find((w) => w.url().includes(part));
  if (!worker) throw new Error(`no worker whose URL contains ${part}`);
  const closed = worker.waitForEvent('close');
  await worker.evaluate(() => setTimeout(() => self.close(), 0));
  await closed;
}
