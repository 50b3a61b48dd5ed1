// Many sessions, as a user meets them at both viewports: three sessions
// with their own transcripts and files, switching, the open session in the
// address (reload and Back), a session working on in the background while
// another is open, the limit on live runtimes said when it holds, Rename,
// search, and no accessibility violations on the list.
// Synchronised on what the page shows and on OPFS, never on sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, openApp, waitConnected } from '../lib/browser.mjs';
import {
  closeSessionList as closeList,
  commandBlock,
  openSessionList as openList,
  runCommand as run,
  send,
  sessionLink as link,
  sessionList as list,
  transcript,
} from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';

/** The session the address names. */
const addressed = (page) => new URL(page.url()).hash.replace(/^#\/s\//, '');

async function openSession(page, phone, name) {
  await openList(page, phone);
  const before = page.url();
  await link(page, name).click();
  await page.waitForURL((url) => url.href !== before);
  // On a phone choosing a session closes the list over the chat.
  if (phone) await list(page).waitFor({ state: 'hidden' });
  await openList(page, phone);
  await list(page).getByRole('link', { name, exact: true, current: 'page' }).waitFor();
  await closeList(page, phone);
}

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  const phone = name === 'phone';
  describe(`sessions at ${viewport.width}×${viewport.height} (${name})`, () => {
    let browser;
    let ids;
    before(async () => {
      browser = await openApp(viewport);
    });
    after(async () => browser?.close());

    test('three sessions keep their own transcripts and files', async () => {
      const { page } = browser;
      await run(page, 'echo alpha > a.txt');
      await page.waitForURL(/#\/s\//);
      const first = addressed(page);

      for (const [word, file] of [['beta', 'b.txt'], ['gamma', 'c.txt']]) {
        await openList(page, phone);
        await list(page).getByRole('button', { name: 'New session' }).click();
        await closeList(page, phone);
        // The new session is open: its transcript is empty and its row is current.
        await page.waitForURL((url) => !url.hash.endsWith(first) && url.hash.startsWith('#/s/'));
        await commandBlock(page, 'echo alpha > a.txt').waitFor({ state: 'detached' });
        await run(page, `echo ${word} > ${file}`);
      }
      ids = addressed(page);

      await openList(page, phone);
      const rows = list(page).getByRole('link');
      assert.deepEqual(await rows.allTextContents(), [
        '$ echo gamma > c.txt',
        '$ echo beta > b.txt',
        '$ echo alpha > a.txt',
      ]);
      await closeList(page, phone);
      assert.deepEqual(await readWorkspaceFile(page, 'a.txt'), ['alpha\n']);
      assert.deepEqual(await readWorkspaceFile(page, 'b.txt'), ['beta\n']);
      assert.deepEqual(await readWorkspaceFile(page, 'c.txt'), ['gamma\n']);
    });

    test('switching shows the open session, in the address, and Back returns', async () => {
      const { page } = browser;
      await openSession(page, phone, '$ echo alpha > a.txt');
      await commandBlock(page, 'echo alpha > a.txt').waitFor();
      assert.equal(await commandBlock(page, 'echo gamma > c.txt').count(), 0);
      assert.notEqual(addressed(page), ids);
      // The session runs again on its own workspace.
      await run(page, 'cat a.txt');
      await commandBlock(page, 'cat a.txt').getByText('alpha').first().waitFor();

      await page.goBack();
      await commandBlock(page, 'echo gamma > c.txt').waitFor();
      assert.equal(addressed(page), ids);
      assert.equal(await commandBlock(page, 'cat a.txt').count(), 0);
    });

    test('a reload returns to the open session', async () => {
      const { page } = browser;
      await page.reload();
      await waitConnected(page);
      await commandBlock(page, 'echo gamma > c.txt').waitFor();
      assert.equal(addressed(page), ids);
      assert.equal(await commandBlock(page, 'echo alpha > a.txt').count(), 0);
      await openList(page, phone);
      assert.equal(await list(page).getByRole('link').count(), 3);
      await closeList(page, phone);
    });

    test('a follower tab sees every session and opens any of them', async () => {
      const second = await browser.context.newPage();
      try {
        await second.goto(BASE_URL);
        await second.getByRole('status').filter({ hasText: 'Following another tab (read-only)' }).waitFor();
        await openList(second, phone);
        await link(second, '$ echo beta > b.txt').waitFor();
        assert.equal(await list(second).getByRole('link').count(), 3);
        await openSession(second, phone, '$ echo beta > b.txt');
        await commandBlock(second, 'echo beta > b.txt').waitFor();
        assert.equal(await commandBlock(second, 'echo gamma > c.txt').count(), 0);
        // The leading tab still shows its own session.
        assert.equal(addressed(browser.page), ids);
        await commandBlock(browser.page, 'echo gamma > c.txt').waitFor();
      } finally {
        await second.close();
      }
    });

    test('a session keeps working in the background while another is open', async () => {
      const { page } = browser;
      await send(page, '$ sleep 4\n$ echo finished > bg.txt');
      await commandBlock(page, 'sleep 4').getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      await openList(page, phone);
      await list(page).getByText(/keep working in the background, up to 3 at once/).waitFor();
      await closeList(page, phone);
      // Opening another while this one works is allowed now.
      await openSession(page, phone, '$ echo alpha > a.txt');
      assert.notEqual(addressed(page), ids);
      await commandBlock(page, 'echo alpha > a.txt').waitFor();
      // The list says when the one left working is done; its output stays
      // out of the open session's transcript, and its file is written.
      await openList(page, phone);
      await list(page)
        .locator('li.session[data-status="ready"]')
        .filter({ has: page.getByRole('link', { name: '$ echo gamma > c.txt', exact: true }) })
        .waitFor({ timeout: 30_000 });
      await closeList(page, phone);
      assert.equal(await commandBlock(page, 'echo finished > bg.txt').count(), 0);
      assert.deepEqual(await readWorkspaceFile(page, 'bg.txt'), ['finished\n']);
      await openSession(page, phone, '$ echo gamma > c.txt');
      assert.equal(addressed(page), ids);
      await commandBlock(page, 'echo finished > bg.txt').getByText('completed', { exact: true }).waitFor();
    });

    test('with three sessions working another is not started, and the page says why', async () => {
      const { page } = browser;
      const working = [
        ['$ echo gamma > c.txt', 'sleep 30'],
        ['$ echo alpha > a.txt', 'sleep 31'],
        ['$ echo beta > b.txt', 'sleep 32'],
      ];
      for (const [session, line] of working) {
        if (session !== '$ echo gamma > c.txt') await openSession(page, phone, session);
        await send(page, `$ ${line}`);
        await commandBlock(page, line).getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      }
      const open = addressed(page);
      await openList(page, phone);
      await list(page).getByRole('button', { name: 'New session' }).click();
      await page.getByText(/3 sessions are working, the most that run at once; open another when one of them is done, or stop one/).waitFor();
      await closeList(page, phone);
      assert.equal(addressed(page), open, 'the open session stays open');
      await openList(page, phone);
      assert.equal(await list(page).getByRole('link').count(), 3, 'no session was added');
      await closeList(page, phone);
      // Stop ends each where it runs; the last one stopped stays open.
      for (const [session, line] of working.reverse()) {
        if (session !== '$ echo beta > b.txt') await openSession(page, phone, session);
        await page.getByRole('button', { name: 'Stop' }).click();
        await commandBlock(page, line).getByText('cancelled', { exact: true }).waitFor({ timeout: 30_000 });
      }
      assert.equal(addressed(page), ids);
    });

    test('Rename names a session; search finds titles and transcript text', async () => {
      const { page } = browser;
      await openList(page, phone);
      await list(page).getByRole('button', { name: 'Rename' }).click();
      await list(page).getByRole('textbox', { name: 'Session name' }).fill('Gamma work');
      await list(page).getByRole('button', { name: 'Save name' }).click();
      await link(page, 'Gamma work').waitFor();

      const search = list(page).getByRole('searchbox', { name: 'Search sessions' });
      await search.fill('beta');
      await list(page).getByRole('link').filter({ hasText: 'beta' }).waitFor();
      await link(page, 'Gamma work').waitFor({ state: 'detached' });
      assert.equal(await list(page).getByRole('link').count(), 1);
      // Transcript text, not only titles: only the renamed session wrote bg.txt.
      // Barrier: the other sessions leave the list before it is counted
      // (the match on transcript text is answered after the title's).
      await search.fill('bg.txt');
      await link(page, 'Gamma work').waitFor();
      await link(page, '$ echo alpha > a.txt').waitFor({ state: 'detached' });
      await link(page, '$ echo beta > b.txt').waitFor({ state: 'detached' });
      assert.equal(await list(page).getByRole('link').count(), 1);
      await search.fill('');
      await link(page, '$ echo alpha > a.txt').waitFor();
    });

    test('a name being typed survives its session running and settling under it', async () => {
      const { page } = browser;
      // The row's status and bytes change while the name is typed.
      await closeList(page, phone);
      await send(page, '$ sleep 4');
      await openList(page, phone);
      const running = list(page).locator('li.session[data-status="running"]');
      await running.waitFor();
      await running.getByRole('button', { name: 'Rename' }).click();
      const name = list(page).getByRole('textbox', { name: 'Session name' });
      await name.fill('Named while it ran');
      assert.equal(await running.count(), 1, 'still running once the name was typed (4 s of sleep)');
      await list(page)
        .locator('li.session[data-status="ready"]')
        .getByRole('textbox', { name: 'Session name' })
        .waitFor({ timeout: 30_000 });
      assert.equal(await name.inputValue(), 'Named while it ran');
      assert.ok(await name.evaluate((el) => el === document.activeElement), 'the name field kept the focus');
      await name.press('Enter');
      await link(page, 'Named while it ran').waitFor();
      await closeList(page, phone);
    });

    test('axe-core finds no violations with the session list open', async () => {
      const { page } = browser;
      await openList(page, phone);
      const { violations } = await new AxeBuilder({ page }).include('#sessions').analyze();
      assert.deepEqual(
        violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(', ')}`),
        [],
      );
      await closeList(page, phone);
    });

    test('no errors in the console', () => {
      assert.deepEqual(browser.errors, []);
    });
  });
}
