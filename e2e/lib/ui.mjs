// The page as a user finds it, by the accessible names of DESIGN.md: the
// helpers the end-to-end files share.
import { waitConnected } from './browser.mjs';

export const transcript = (page) => page.getByRole('log', { name: 'Transcript' });
export const card = (page) => transcript(page).getByRole('region', { name: 'Recovery' });
export const commandBlock = (page, line) =>
  transcript(page).getByRole('group', { name: `Command: ${line}` });

/** A model reply as it streams, before it is recorded. */
export const streaming = (page) => page.getByRole('group', { name: 'Streaming (not yet saved)' });

/** An uncertain command's item on the recovery card. */
export const uncertainItem = (page, line) => card(page).getByRole('group', { name: `Uncertain: ${line}` });

/**
 * Runs `line` (a command that sleeps) and reloads the page while it runs:
 * host loss makes it uncertain. Resolves with its item on the card once
 * that offers Mark done.
 */
export async function uncertainAfterReload(page, line) {
  await send(page, `$ ${line}`);
  await commandBlock(page, line).getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
  await page.reload();
  await waitConnected(page);
  const item = uncertainItem(page, line);
  await item.getByRole('button', { name: 'Mark done', exact: true }).waitFor({ timeout: 30_000 });
  return item;
}

/** Waits until a command's block shows `outcome` (a text or a pattern). */
export async function waitOutcome(block, outcome, timeout = 30_000) {
  await block.getByText(outcome, { exact: true }).first().waitFor({ timeout });
}

export async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Saves a model profile in the Profiles dialog, uses it for the session
 * and waits until the app is Connected again; `chosen(dialog)`, if given,
 * runs once the profile shows selected, before the dialog closes. */
export async function addProfile(page, { name, provider, baseUrl, model, key, idleSeconds }, chosen) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = page.getByRole('dialog', { name: 'Profiles' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: provider });
  await dialog.getByLabel('Base URL', { exact: true }).fill(baseUrl);
  await dialog.getByLabel('Model', { exact: true }).fill(model);
  await dialog.getByLabel('API key', { exact: true }).fill(key);
  if (idleSeconds !== undefined) {
    await dialog.getByLabel('Idle time in a reply (seconds)', { exact: true }).fill(String(idleSeconds));
  }
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: name });
  await item.getByText('API key set').waitFor();
  await item.getByRole('button', { name: 'Use for this session' }).click();
  await item.getByText('(selected)').waitFor();
  await chosen?.(dialog);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  // A session that already ran starts a new execution with the profile:
  // "(selected)" came in the same status as that start. Waiting for the
  // start to end, not only for a Connected that may be from before it,
  // keeps a message sent next from meeting the start.
  await page.locator('.lifecycle:not([data-state="starting"])').waitFor({ state: 'attached' });
  await waitConnected(page);
}

/** Waits until the open session runs and the status line says Connected:
 * after Resume, whose start waits for its runtime ("Connecting…", Send
 * disabled), a Connected from before the start is not enough. */
export async function waitRunning(page) {
  await page.locator('.lifecycle[data-state="running"]').waitFor({ state: 'attached', timeout: 30_000 });
  await waitConnected(page);
}

/** The session list, and a session's link in it by title. */
export const sessionList = (page) => page.getByRole('navigation', { name: 'Sessions' });
export const sessionLink = (page, name) => sessionList(page).getByRole('link', { name, exact: true });

/** Opens the session list (a drawer over the chat on a phone) and waits
 * for its rows, a module of its own fetched once the pane can be seen
 * (web/src/sessions.rs). */
export async function openSessionList(page, phone) {
  if (phone && !(await sessionList(page).isVisible())) {
    await page.getByRole('button', { name: 'Sessions', exact: true }).click();
  }
  await sessionList(page).waitFor();
  await sessionList(page).locator('ul.session-list').waitFor({ state: 'attached' });
}

/** Closes the session list's drawer on a phone (a no-op on a desktop). */
export async function closeSessionList(page, phone) {
  if (phone && (await sessionList(page).isVisible())) {
    await page.getByRole('button', { name: 'Close sessions' }).click();
    await sessionList(page).waitFor({ state: 'hidden' });
  }
}

/** Makes sure the details pane's content is on the page, so that its
 * fields can be read. It is a module of its own (web/src/app.rs), fetched
 * once the pane can be seen: where the desktop layout shows the pane, once
 * the status line has settled; where the pane is a drawer, the first time
 * it opens. There it is opened and closed again, as a user would to read
 * it. */
export async function loadDetails(page) {
  const pane = page.getByRole('complementary', { name: 'Session details' });
  // Found hidden too, as the tests read it (a role finds visible panes only).
  const storage = page.locator('#details [data-field="storage"]');
  if (!(await pane.isVisible()) && (await storage.count()) === 0) {
    await page.getByRole('button', { name: 'Session details' }).click();
    await storage.waitFor();
    await pane.getByRole('button', { name: 'Close details' }).click();
    await pane.waitFor({ state: 'hidden' });
  }
  await storage.waitFor({ state: 'attached' });
}

/** Runs `line` as a command in the open session and waits until it completed. */
export async function runCommand(page, line) {
  await send(page, `$ ${line}`);
  await commandBlock(page, line).getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
}

/**
 * What the page said when a step failed, attached to the error (the run's
 * summary of failures prints it whole; CI keeps only part of the rest):
 * the transcript's end, the status lines and alerts, the message box,
 * whether Stop was enabled, and the workers' warnings.
 */
export async function explainFailure(browser, failure, extra = {}) {
  const { page } = browser;
  const shown = await transcript(page).innerText({ timeout: 1_000 }).catch(() => '(no transcript)');
  const said = await page.locator('[role=status],[role=alert],.notices').allInnerTexts().catch(() => []);
  const composer = await page
    .getByRole('textbox', { name: 'Message' })
    .inputValue({ timeout: 1_000 })
    .catch(() => '(no message box)');
  const stopEnabled = await page
    .getByRole('button', { name: 'Stop' })
    .isEnabled({ timeout: 1_000 })
    .catch(() => '(no Stop button)');
  failure.page = { transcript: shown.slice(-2_000), said, composer, stopEnabled, warnings: browser.warnings, ...extra };
  return failure;
}

/** Starts recording, in the page, what it shows from now on that a test
 * may need to know never appeared, however briefly: whether the status
 * line said "Connecting…", every summary the recovery card had (in order,
 * each once), and whether Send was disabled under a typed message. Read it
 * with `watched(page)`. */
export async function watchPage(page) {
  await page.evaluate(() => {
    const seen = (window.__watched = { connecting: false, summaries: [], sendDisabled: false });
    const look = () => {
      for (const s of document.querySelectorAll('[role=status]')) {
        if (s.textContent === 'Connecting…') seen.connecting = true;
      }
      const summary = document.querySelector('[role=region][aria-label=Recovery] .recovery-summary')?.textContent;
      if (summary && seen.summaries.at(-1) !== summary) seen.summaries.push(summary);
      const box = document.querySelector('textarea[aria-label=Message]');
      const submit = document.querySelector('form.composer button[type=submit]');
      if (box?.value.trim() && submit?.disabled) seen.sendDisabled = true;
    };
    new MutationObserver(look).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
  });
}

/** What `watchPage` recorded so far. */
export const watched = (page) => page.evaluate(() => window.__watched);
