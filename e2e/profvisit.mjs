import { chromium } from 'playwright-core';
import { ARGS } from './lib/browser.mjs';
import { writeFileSync } from 'node:fs';
const url = process.env.LIFELINE_URL;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
// warm the browser once (its own startup is not the app's)
{ const c = await browser.newContext(); const p = await c.newPage(); await p.goto('about:blank'); await c.close(); }
const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await ctx.newPage();
await page.addInitScript(() => {
  window.__at = {};
  new MutationObserver(() => {
    for (const s of document.querySelectorAll('[role=status]')) if (s.textContent === 'Connected' && !window.__at.connected) window.__at.connected = performance.now();
  }).observe(document, { subtree: true, childList: true, characterData: true });
});
await browser.startTracing(page, { categories: ['disabled-by-default-v8.cpu_profiler', 'v8', 'v8.wasm', 'devtools.timeline', 'disabled-by-default-devtools.timeline', '__metadata', 'blink.resource', 'loading', 'netlog'] });
await page.goto(url);
await page.waitForFunction(() => window.__at.connected !== undefined, null, { timeout: 60000, polling: 'raf' });
const at = await page.evaluate(() => window.__at.connected);
const origin = await page.evaluate(() => performance.timeOrigin);
console.log('connected at', at.toFixed(0), 'ms');
const buf = await browser.stopTracing();
writeFileSync('/tmp/rep/trace-visit.json', buf);
writeFileSync('/tmp/rep/trace-visit-meta.json', JSON.stringify({ at, origin }));
await browser.close();
