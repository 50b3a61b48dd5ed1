// Reproduces the soak's finding 1 (docs/soak.md) on its own: a Mark done
// clicked while the controller worker is dead but the page has not noticed
// yet. Run: LIFELINE_URL=http://127.0.0.1:8080/ node soak/repro-verdict.mjs
// (with `cargo xtask serve` running). Prints what the page and the journal
// show; exits 1 if the verdict was lost without the page saying so.
import { BASE_URL, VIEWPORTS, closeWorker, openBrowser, waitConnected } from '../lib/browser.mjs';
import { verdictRecords } from '../lib/journal.mjs';
import { uncertainAfterReload } from '../lib/ui.mjs';

const browser = await openBrowser(VIEWPORTS.desktop);
let lost = false;
try {
  const { page } = browser;
  await page.goto(BASE_URL);
  await waitConnected(page);
  const item = await uncertainAfterReload(page, 'echo 1-1 >> soak.txt; sleep 30');
  const markDone = item.getByRole('button', { name: 'Mark done', exact: true });
  // REPRO_CONTROL=1: the same steps with the controller left alive, to
  // show the verdict is recorded (and found by this script) when it lives.
  const control = process.env.REPRO_CONTROL === '1';
  if (!control) await closeWorker(page, 'controller');
  await markDone.click();
  const clickedAt = Date.now();
  const status = await page.locator('p.connection[role="status"]').textContent();
  console.log(`clicked Mark done with the controller ${control ? 'alive' : 'closed'}; the page said "${status}"`);
  if (!control) {
    await page.getByText(/The controller worker stopped and was restarted/).waitFor({ timeout: 30_000 });
    console.log(`restart notice after ${Date.now() - clickedAt} ms`);
  }
  await waitConnected(page);
  const recorded = await markDone
    .waitFor({ state: 'detached', timeout: 20_000 })
    .then(() => true, () => false);
  const verdicts = await verdictRecords(page);
  const notices = (await page.locator('.notices .notice > p:first-child').allTextContents()).map((t) => t.trim());
  console.log(`afterwards: Mark done ${recorded ? 'gone (verdict shown)' : 'still offered'}; journal records mentioning a verdict: ${verdicts}; notices ${JSON.stringify(notices)}`);
  const told = notices.some((n) => /may not have reached the app/.test(n));
  lost = !recorded && verdicts === 0 && !told;
  if (!recorded && verdicts === 0 && told) console.log('the verdict was not recorded, and the page said so');
} finally {
  await browser.close();
}
console.log(lost ? 'the verdict was lost without a word' : 'the verdict was recorded or reported');
process.exit(lost ? 1 : 0);
