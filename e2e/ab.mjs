import { openBrowser, VIEWPORTS } from '/work/main/e2e/lib/browser.mjs';
import { readFileSync } from 'node:fs';
const url = 'http://127.0.0.1:8090/';
const variants = { old: readFileSync('/tmp/fontprobe/boot-old.js', 'utf8'), new: readFileSync('/tmp/fontprobe/boot-new.js', 'utf8') };
const res = { old: [], new: [] };
const N = Number(process.argv[2] ?? 8);
for (let i = 0; i < N; i++) for (const v of (i % 2 ? ['old', 'new'] : ['new', 'old'])) {
  const b = await openBrowser(VIEWPORTS.desktop);
  const { page } = b;
  await b.context.route('**/boot.js', (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: variants[v] }));
  await page.addInitScript(() => {
    new MutationObserver(() => {
      if (window.__conn) return;
      for (const s of document.querySelectorAll('[role=status]')) if (s.textContent === 'Connected') window.__conn = performance.now();
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(url);
  await page.getByRole('status').filter({ hasText: /^Connected$/ }).waitFor();
  res[v].push(await page.evaluate(() => window.__conn));
  if (b.errors.length) console.log(v, 'errors', b.errors);
  await b.close();
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const v of ['old', 'new']) console.log(v, 'median', med(res[v]).toFixed(0), res[v].map((x) => x.toFixed(0)).join(' '));
