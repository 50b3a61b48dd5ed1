// The `Environment` selector (reference 000): a session can run in this
// tab's worker sandbox or in a local folder the user opened. Headless
// Chromium cannot drive the browser's own folder picker, so the picker is
// replaced, in the page only, by one that hands back a real directory
// handle: a folder `my-project` beside (not inside) Lifeline's workspaces.
// Everything after the pick — storing the handle, the controller's checks,
// the runtime opening it, the recovery card — is the product's own path.
// Synchronised on what the page shows, never on sleeps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { card, send, transcript } from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';

/** With LIFELINE_SCREENSHOTS=<dir>, the screens the user guide shows
 * (docs/recovery.md) are saved there. */
async function shot(page, name) {
  const dir = process.env.LIFELINE_SCREENSHOTS;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png` });
}

const environment = (page) => page.getByRole('combobox', { name: 'Environment' });

async function replacePicker(context) {
  await context.addInitScript(() => {
    window.showDirectoryPicker = async (options) => {
      window.__pickerOptions = options;
      if (window.__cancelPicker) throw new DOMException('The user aborted a request.', 'AbortError');
      const root = await navigator.storage.getDirectory();
      return root.getDirectoryHandle('my-project', { create: true });
    };
  });
}

async function seedFolder(page) {
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const folder = await root.getDirectoryHandle('my-project', { create: true });
    const file = await folder.getFileHandle('notes.txt', { create: true });
    const w = await file.createWritable();
    await w.write('from the user\n');
    await w.close();
  });
}

async function readFolderFile(page, name) {
  return page.evaluate(async (name) => {
    const root = await navigator.storage.getDirectory();
    const folder = await root.getDirectoryHandle('my-project');
    try {
      return await (await (await folder.getFileHandle(name)).getFile()).text();
    } catch {
      return null;
    }
  }, name);
}

async function completed(page, line) {
  await transcript(page)
    .getByRole('group', { name: `Command: ${line}` })
    .last()
    .getByText('completed', { exact: true })
    .waitFor({ timeout: 30_000 });
}

async function selectedText(page) {
  return environment(page).evaluate((s) => s.selectedOptions[0]?.textContent.trim());
}

async function waitSelected(page, text) {
  await page.waitForFunction(
    (text) => document.getElementById('environment')?.selectedOptions[0]?.textContent.trim() === text,
    text,
  );
}

async function showDetails(page, phone) {
  if (phone) await page.getByRole('button', { name: 'Session details' }).click();
  await environment(page).waitFor();
}

async function hideDetails(page, phone) {
  if (phone) {
    await page.getByRole('button', { name: 'Session details' }).click();
    await environment(page).waitFor({ state: 'hidden' });
  }
}

async function chooseFolder(page) {
  await environment(page).selectOption({ label: 'A local folder…' });
  const confirm = page.getByRole('group', { name: 'Environment' });
  await confirm.getByText(/Start a new session in the folder “my-project”\?/).waitFor();
  return confirm;
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  const phone = vname === 'phone';
  describe(`the Environment selector at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('a session moves to a local folder, runs there, survives a reload and moves back', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page, context } = browser;
        await replacePicker(context);
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ echo sandbox > where.txt');
        await completed(page, 'echo sandbox > where.txt');
        await seedFolder(page);

        await showDetails(page, phone);
        assert.equal(await selectedText(page), 'Worker sandbox (OPFS)');
        if (!phone) {
          // A cancelled picker changes nothing and asks nothing.
          await page.evaluate(() => { window.__cancelPicker = true; });
          await environment(page).selectOption({ label: 'A local folder…' });
          await page.waitForFunction(() => window.__pickerOptions !== undefined);
          assert.equal(await page.getByRole('group', { name: 'Environment' }).count(), 0);
          assert.equal(await selectedText(page), 'Worker sandbox (OPFS)');
          await page.evaluate(() => { window.__cancelPicker = false; });
        }
        const confirm = await chooseFolder(page);
        assert.equal(await page.evaluate(() => window.__pickerOptions.mode), 'readwrite');
        const { violations } = await new AxeBuilder({ page }).analyze();
        assert.deepEqual(violations.map((v) => v.id), [], 'axe-core with the confirmation open');
        await shot(page, `environment-confirm-${vname}`);
        // Nothing changes before the confirmation.
        assert.equal(await selectedText(page), 'Worker sandbox (OPFS)');
        await confirm.getByRole('button', { name: 'Start there' }).click();
        await waitSelected(page, 'Local folder: my-project');
        await hideDetails(page, phone);

        // The agent works in the user's folder, not in a sandbox workspace.
        await waitConnected(page);
        await send(page, '$ cat notes.txt\n$ echo agent > out.txt');
        await completed(page, 'echo agent > out.txt');
        await transcript(page).getByText('from the user').first().waitFor();
        assert.equal(await readFolderFile(page, 'out.txt'), 'agent\n');
        assert.deepEqual(await readWorkspaceFile(page, 'out.txt'), [], 'nothing in the sandbox');
        assert.deepEqual(await readWorkspaceFile(page, 'where.txt'), ['sandbox\n'], 'the old session’s files stay');

        // A reload mid-command: the card says which environment exists and
        // what is possible; nothing re-runs; the folder opens again.
        await send(page, '$ sleep 30');
        await transcript(page)
          .getByRole('group', { name: 'Command: sleep 30' })
          .getByText('running', { exact: true })
          .waitFor({ timeout: 30_000 });
        await page.reload();
        await waitConnected(page);
        const c = card(page);
        const item = c.getByRole('group', { name: 'Uncertain: sleep 30' });
        await item.waitFor({ timeout: 30_000 });
        // Said with the rows, not hidden behind Details.
        await c
          .getByText('Environment: your folder “my-project”. It is yours: Lifeline never deletes it. A new runtime can open it again.')
          .waitFor();
        await shot(page, `environment-card-${vname}`);
        await item.getByRole('button', { name: 'Mark not done' }).click();
        await c.waitFor({ state: 'detached', timeout: 30_000 });
        assert.equal(await transcript(page).getByRole('group', { name: 'Command: sleep 30' }).count(), 1, 'nothing re-ran');
        await send(page, '$ cat out.txt');
        await completed(page, 'cat out.txt');
        await transcript(page).getByText('agent', { exact: true }).first().waitFor();

        // Back to the sandbox: a new, empty workspace; the folder stays.
        await showDetails(page, phone);
        await waitSelected(page, 'Local folder: my-project');
        await environment(page).selectOption({ label: 'Worker sandbox (OPFS)' });
        const back = page.getByRole('group', { name: 'Environment' });
        await back.getByText("Start a new session in this tab's worker sandbox?").waitFor();
        await back.getByRole('button', { name: 'Start there' }).click();
        await waitSelected(page, 'Worker sandbox (OPFS)');
        await hideDetails(page, phone);
        await waitConnected(page);
        await send(page, '$ ls');
        await completed(page, 'ls');
        assert.equal(await readFolderFile(page, 'out.txt'), 'agent\n', 'the folder is never removed');
        assert.equal(await readFolderFile(page, 'notes.txt'), 'from the user\n');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}

describe('a local folder the browser no longer has (1280×800)', () => {
  test('the card says so, offers no action that would open it, and still archives', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page, context } = browser;
      await replacePicker(context);
      await page.goto(BASE_URL);
      await waitConnected(page);
      await seedFolder(page);
      const confirm = await chooseFolder(page);
      await confirm.getByRole('button', { name: 'Start there' }).click();
      await waitSelected(page, 'Local folder: my-project');
      await waitConnected(page);
      await send(page, '$ echo kept > kept.txt');
      await completed(page, 'echo kept > kept.txt');
      // The folder disappears outside Lifeline, then the page reloads: the
      // automatic resume must not recreate it, and must say why it stops.
      await page.evaluate(async () => {
        const root = await navigator.storage.getDirectory();
        await root.removeEntry('my-project', { recursive: true });
      });
      await page.reload();
      await waitConnected(page);
      const c = card(page);
      await c
        .getByText('Environment: your folder “my-project”. It is yours: Lifeline never deletes it. It cannot be opened again in this browser.')
        .waitFor({ timeout: 30_000 });
      assert.equal(await c.getByRole('button', { name: 'Resume' }).count(), 0, 'no Resume into a folder that is gone');
      assert.equal(await c.getByRole('button', { name: 'Inspect workspace' }).count(), 0);
      await c.getByRole('button', { name: 'Details' }).click();
      await c.getByText(/Resume is not possible now: the folder “my-project” is no longer available in this browser/).waitFor();
      const { violations } = await new AxeBuilder({ page }).analyze();
      assert.deepEqual(violations.map((v) => v.id), [], 'axe-core on the card');
      assert.equal(
        await page.evaluate(async () => {
          const root = await navigator.storage.getDirectory();
          try {
            await root.getDirectoryHandle('my-project');
            return 'recreated';
          } catch {
            return 'absent';
          }
        }),
        'absent',
        'never recreated empty',
      );
      await c.getByRole('button', { name: 'Archive' }).click();
      await c.getByRole('button', { name: 'Confirm archive' }).click();
      await c.getByText('This session is archived').waitFor({ timeout: 30_000 });
    } finally {
      await browser.close();
    }
  });
});
