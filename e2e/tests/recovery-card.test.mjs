// The recovery experience in the browser: the inline `Recovery` card inside
// the transcript, its actions through the real resume path, workspace-only
// access, uncertain commands after a reload, keyboard use, target sizes and
// axe-core on every recovery screen, at 1280×800 and 390×844. Synchronised
// on what the page shows, never on sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, onlyRefusedFetches, openApp, openBrowser, waitConnected } from '../lib/browser.mjs';
import { startStubProvider, HELLO_TEXT } from '../lib/stub-provider.mjs';
import { addProfile, card, commandBlock, send, transcript, waitOutcome, waitRunning, watchPage, watched } from '../lib/ui.mjs';

/** With LIFELINE_SCREENSHOTS=<dir>, the screens the user guide shows
 * (docs/recovery.md) are saved there. */
async function shot(page, name) {
  const dir = process.env.LIFELINE_SCREENSHOTS;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png` });
}

let stub;
before(async () => {
  stub = await startStubProvider();
});
after(async () => {
  await stub?.close();
});

async function noAxeViolations(page, where) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(
    violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe-core on ${where}`,
  );
}

/** Every button in the card meets the target size for the viewport. */
async function assertTargets(page, min) {
  const sizes = await card(page)
    .getByRole('button')
    .evaluateAll((buttons) => buttons.map((b) => [b.textContent.trim(), b.getBoundingClientRect().height, b.getBoundingClientRect().width]));
  assert.ok(sizes.length > 0);
  for (const [name, h, w] of sizes) {
    assert.ok(h >= min - 0.5 && w >= min - 0.5, `${name}: ${w}×${h} px is below ${min} px`);
  }
}

/** A failed model turn: a profile whose key the stub refuses. */
async function failATurn(page) {
  await send(page, '$ echo kept > kept.txt');
  await transcript(page).getByRole('group', { name: 'Command: echo kept > kept.txt' }).getByText('completed', { exact: true }).waitFor();
  await addProfile(page, stub.profile('Refused key', 'bad-key'));
  await watchPage(page);
  await send(page, 'hello');
  await card(page).getByText('The last turn failed. The workspace and keys are kept.').waitFor({ timeout: 30_000 });
  // The card came once its failure was recorded, never before with a
  // summary that could not name it.
  assert.deepEqual((await watched(page)).summaries, ['The last turn failed. The workspace and keys are kept.']);
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  const min = vname === 'phone' ? 44 : 28;
  describe(`the recovery card at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('a failed turn shows the card; Details, Inspect workspace (read-only) and Resume work', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await failATurn(page);
        const c = card(page);
        // The card is inside the transcript, before the messages.
        const before = await transcript(page).evaluate((log) => {
          const region = log.querySelector('[aria-label="Recovery"]');
          const firstTurn = log.querySelector('.turn');
          return region && firstTurn && region.compareDocumentPosition(firstTurn) & Node.DOCUMENT_POSITION_FOLLOWING;
        });
        assert.ok(before, 'the card comes before the messages');
        for (const row of ['Conversation', 'Workspace', 'Credentials', 'Processes', 'Attachments']) {
          await c.getByRole('rowheader', { name: row }).waitFor();
        }
        assert.equal(await c.getByRole('row', { name: /^Workspace survived/ }).count(), 1);
        // Exactly one place acts: no other Resume on the page.
        assert.equal(await page.getByRole('button', { name: 'Resume' }).count(), 1);
        await assertTargets(page, min);
        await noAxeViolations(page, 'the failure card');
        await shot(page, `card-failed-${vname}`);

        // Details: a disclosure operated from the keyboard.
        const details = c.getByRole('button', { name: 'Details' });
        assert.equal(await details.getAttribute('aria-expanded'), 'false');
        await details.focus();
        await page.keyboard.press('Enter');
        assert.equal(await details.getAttribute('aria-expanded'), 'true');
        await c.getByText(/^Error stamp /).waitFor();
        await shot(page, `card-details-${vname}`);
        await page.keyboard.press('Space');
        assert.equal(await details.getAttribute('aria-expanded'), 'false');

        // Workspace-only access: read-only, nothing revived.
        const runtimesBefore = page.workers().filter((w) => w.url().endsWith('runtime.js')).length;
        await c.getByRole('button', { name: 'Inspect workspace' }).click();
        const ws = transcript(page).getByRole('region', { name: 'Workspace' });
        await ws.getByText('Read-only: the agent is stopped').waitFor();
        await ws.getByRole('button', { name: 'kept.txt' }).click();
        await ws.getByText('kept', { exact: true }).waitFor();
        assert.equal(page.workers().filter((w) => w.url().endsWith('runtime.js')).length, runtimesBefore, 'no runtime started');
        await card(page).getByText('The last turn failed. The workspace and keys are kept.').waitFor();
        await noAxeViolations(page, 'workspace-only access');
        await shot(page, `workspace-only-${vname}`);
        await ws.getByRole('button', { name: 'Close workspace' }).click();
        await ws.waitFor({ state: 'detached' });

        // Resume: the real resume path; the card goes, the session runs.
        await c.getByRole('button', { name: 'Resume' }).click();
        await c.waitFor({ state: 'detached', timeout: 30_000 });
        await waitConnected(page);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test("a card whose code cannot be fetched says so where it would be; Try again shows the card", async () => {
      // The card's view is a module of its own (web/src/recovery.rs), fetched
      // the first time a card is shown.
      const refused = '**/split_recovery.wasm';
      const browser = await openApp(viewport, ({ context }) =>
        context.route(refused, (route) => route.abort('internetdisconnected')),
      );
      try {
        const { page, context } = browser;
        await addProfile(page, stub.profile('Refused key', 'bad-key'));
        await send(page, 'hello');
        const alert = transcript(page).getByRole('alert').filter({ hasText: 'This part of the page could not be loaded' });
        await alert.waitFor({ timeout: 30_000 });
        assert.equal(await card(page).count(), 0, 'no card without its code');
        await context.unroute(refused);
        await transcript(page).getByRole('button', { name: 'Try again' }).click();
        await card(page).getByText('The last turn failed. The workspace and keys are kept.').waitFor();
        await alert.waitFor({ state: 'detached' });
        // The card works once loaded: its Resume is the one on the page.
        assert.equal(await page.getByRole('button', { name: 'Resume' }).count(), 1);
        // The refused fetch, as the browser and the loader log it, and nothing else.
        assert.ok(onlyRefusedFetches(browser.errors), browser.errors.join('\n'));
      } finally {
        await browser.close();
      }
    });

    test('a lost encryption key is said by its reason; the key entered again and Resume bring the model back', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await addProfile(page, stub.profile(`Stub ${vname}`, 'sk-kept', 'OpenAI-compatible'));
        await send(page, `hello before (${vname})`);
        await transcript(page).getByText(HELLO_TEXT).last().waitFor({ timeout: 30_000 });
        // Part of the site's storage is cleared: the credentials' wrapping
        // key goes, the encrypted key stays.
        await page.evaluate(
          () =>
            new Promise((resolve, reject) => {
              const open = indexedDB.open('lifeline-config');
              open.onerror = () => reject(open.error);
              open.onsuccess = () => {
                const tx = open.result.transaction('keys', 'readwrite');
                tx.objectStore('keys').delete('credentials');
                tx.oncomplete = () => {
                  open.result.close();
                  resolve();
                };
                tx.onerror = () => reject(tx.error);
              };
            }),
        );
        // The reload resumes the session, which needs its key.
        await page.reload();
        const c = card(page);
        await c.getByText('A key this session needs is missing.').waitFor({ timeout: 30_000 });
        await c.getByRole('button', { name: 'Details' }).click();
        await c.getByText(/could not be read \(the encryption key is gone\); enter the key again in Profiles, then resume/).waitFor();
        await noAxeViolations(page, 'the lost-key card');
        // The way forward the card names.
        await page.getByRole('button', { name: 'Profiles' }).click();
        const dialog = page.getByRole('dialog', { name: 'Profiles' });
        const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: `Stub ${vname}` });
        await item.getByRole('button', { name: 'Edit' }).click();
        await dialog.getByLabel('API key', { exact: true }).fill('sk-again');
        await dialog.getByRole('button', { name: 'Save profile' }).click();
        await dialog.getByText(`Saved “Stub ${vname}”.`).waitFor();
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });
        await watchPage(page);
        await c.getByRole('button', { name: 'Resume' }).click();
        await c.waitFor({ state: 'detached', timeout: 30_000 });
        await waitRunning(page);
        // A resume the person asked for is no first start: the status line
        // stays Connected while its runtime starts.
        assert.equal((await watched(page)).connecting, false, 'the status line said "Connecting…" during the resume');
        // The first reply's text may stand in the transcript more than
        // once (the model's step and the agent's reply): the new reply is
        // the one past what is there now.
        const replies = await transcript(page).getByText(HELLO_TEXT).count();
        await send(page, `hello after (${vname})`);
        await transcript(page).getByText(HELLO_TEXT).nth(replies).waitFor({ timeout: 30_000 });
        const asked = stub.requests.filter((r) => JSON.stringify(r.body.messages).includes(`hello after (${vname})`));
        assert.equal(asked.length, 1, 'the model was asked once, with the key entered again');
        assert.equal(asked[0].headers.authorization, 'Bearer sk-again');
      } finally {
        await browser.close();
      }
    });
  });
}

describe('recovery actions by keyboard alone (1280×800)', () => {
  test('Continue from history starts a linked execution whose message carries provenance; Start fresh asks first', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await failATurn(page);
      const c = card(page);
      // Keyboard only: focus the action and press Enter.
      await c.getByRole('button', { name: 'Continue from history' }).focus();
      await page.keyboard.press('Enter');
      await transcript(page).getByText('[Recovery: continuing from recorded history]').first().waitFor({ timeout: 30_000 });
      await transcript(page).getByText('## Original recorded history (verbatim, most recent turns)').first().waitFor();
      await transcript(page).getByText('## Summary (reconstructed, not original)').first().waitFor();

      // The continuation used the refused key again, so it failed too; now
      // Start fresh, which needs a confirmation.
      await card(page).getByText('The last turn failed. The workspace and keys are kept.').waitFor({ timeout: 30_000 });
      await card(page).getByRole('button', { name: 'Start fresh' }).focus();
      await page.keyboard.press('Enter');
      const confirm = card(page).getByRole('button', { name: 'Confirm start fresh' });
      await confirm.waitFor();
      await noAxeViolations(page, 'the Start fresh confirmation');
      await confirm.focus();
      await page.keyboard.press('Space');
      await transcript(page).getByText(/^No turns yet/).waitFor({ timeout: 30_000 });
      await card(page).waitFor({ state: 'detached' });
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

describe('uncertain commands after a reload (390×844)', () => {
  test('the card lists the command that may have started; Mark not done records the verdict', async () => {
    const browser = await openBrowser(VIEWPORTS.phone);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await send(page, '$ echo start >> marks.txt\n$ sleep 30');
      await transcript(page).getByRole('group', { name: 'Command: sleep 30' }).getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      await page.reload();
      await waitConnected(page);
      const item = card(page).getByRole('group', { name: 'Uncertain: sleep 30' });
      await item.waitFor({ timeout: 30_000 });
      await card(page).getByText('Some actions may or may not have happened. Nothing was repeated.').waitFor();
      // The command says what recovery observed, in words, not the journal's ids.
      await transcript(page).getByRole('group', { name: 'Command: sleep 30' })
        .getByText('the page was reloaded or closed while this ran; its runtime ended with it', { exact: true }).waitFor();
      await assertTargets(page, 44);
      await noAxeViolations(page, 'the uncertain-command card');
      await shot(page, 'card-uncertain-phone');
      await item.getByRole('button', { name: 'Mark not done' }).click();
      await card(page).waitFor({ state: 'detached', timeout: 30_000 });
      assert.equal(await transcript(page).getByRole('group', { name: 'Command: sleep 30' }).count(), 1, 'nothing re-ran');
    } finally {
      await browser.close();
    }
  });
});

describe('a runtime that dies on its own (1280×800)', () => {
  test('the session fails with the runtime lost; Resume starts a new runtime on the same workspace', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await send(page, '$ echo before > before.txt\n$ sleep 60');
      await transcript(page).getByRole('group', { name: 'Command: sleep 60' }).getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      // From outside the product: the runtime worker closes itself.
      const runtime = page.workers().find((w) => w.url().endsWith('runtime.js'));
      assert.ok(runtime, 'a runtime worker');
      await runtime.evaluate(() => self.close()).catch(() => {});
      const c = card(page);
      await c.getByText('The runtime stopped. The workspace is kept.').waitFor({ timeout: 60_000 });
      await transcript(page).getByRole('group', { name: 'Command: sleep 60' }).getByText(/^(lost|may have started)$/).waitFor();
      await transcript(page).getByRole('group', { name: 'Command: sleep 60' }).getByText('its runtime crashed', { exact: true }).waitFor();
      await c.getByRole('button', { name: 'Resume' }).click();
      await c.getByText('The runtime stopped. The workspace is kept.').waitFor({ state: 'detached', timeout: 30_000 });
      await waitRunning(page);
      await send(page, '$ cat before.txt');
      await transcript(page).getByRole('group', { name: 'Command: cat before.txt' }).getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
      assert.equal(await transcript(page).getByRole('group', { name: 'Command: sleep 60' }).count(), 1, 'nothing re-ran');
    } finally {
      await browser.close();
    }
  });
});

describe('a second tab follows the card (1280×800)', () => {
  test('a follower shows the failed session\'s card with every action unavailable, and can act once it leads', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const first = browser.page;
      await first.goto(BASE_URL);
      await waitConnected(first);
      await failATurn(first);

      const second = await browser.context.newPage();
      await second.goto(BASE_URL);
      await second.getByRole('status').filter({ hasText: 'Following another tab (read-only)' }).waitFor();
      const c = card(second);
      await c.getByText('The last turn failed. The workspace and keys are kept.').waitFor({ timeout: 30_000 });
      // The same facts as the leading tab, read from the journal and the
      // browser's storage, not guessed.
      await c.getByRole('row', { name: /^Workspace survived/ }).waitFor();
      await c.getByRole('row', { name: /^Credentials survived/ }).waitFor();
      for (const action of ['Resume', 'Continue from history', 'Start fresh', 'Inspect workspace', 'Archive']) {
        assert.equal(await c.getByRole('button', { name: action }).count(), 0, `${action} is not offered in a follower`);
      }
      await c.getByRole('button', { name: 'Details' }).click();
      await c.getByText(/^Resume is not possible now: another tab is in control/).waitFor();
      await noAxeViolations(second, 'the follower\'s card');
      await shot(second, 'card-follower');

      // The leading tab goes; the follower takes over and its card acts.
      await first.close();
      await waitConnected(second);
      await c.getByRole('button', { name: 'Resume' }).waitFor({ timeout: 30_000 });
      assert.equal(await c.getByText(/another tab is in control/).count(), 0);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

describe('the recovery card in another language (1280×800)', () => {
  test('switching Language to Deutsch words the card’s summary and evidence in German; English restores them', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await failATurn(page);
      const summaryEn = 'The last turn failed. The workspace and keys are kept.';
      const summaryDe = 'Der letzte Durchgang ist fehlgeschlagen. Arbeitsbereich und Schlüssel bleiben erhalten.';
      const c = card(page);
      await c.getByRole('cell', { name: /^the workspace folder is there/ }).waitFor();
      await c.getByRole('cell', { name: /^[0-9]+ turns? recorded in the journal$/ }).waitFor();

      // The core sent phrases, not words: the page words them in German.
      await page.getByRole('combobox', { name: 'Language' }).selectOption({ label: 'Deutsch' });
      await page.locator('html[lang="de"]').waitFor({ state: 'attached' });
      const karte = page.getByRole('log', { name: 'Verlauf' }).getByRole('region', { name: 'Wiederherstellung' });
      await karte.getByText(summaryDe, { exact: true }).waitFor();
      await karte.getByRole('rowheader', { name: 'Arbeitsbereich' }).waitFor();
      await karte.getByRole('cell', { name: /^der Arbeitsbereich-Ordner ist vorhanden/ }).waitFor();
      await karte.getByRole('cell', { name: /^[0-9]+ Durchg(ang|änge) im Journal aufgezeichnet$/ }).waitFor();
      assert.equal(await karte.getByText(summaryEn, { exact: true }).count(), 0, 'no English summary left');
      assert.equal(await karte.getByRole('cell', { name: /^the workspace folder is there/ }).count(), 0, 'no English evidence left');
      // The disclosure's details are German too (the stamp stays as it is).
      await karte.getByRole('button', { name: 'Details' }).click();
      await karte.getByText(/^Fehlerstempel /).waitFor();
      await karte.getByText(/^der Durchgang ist fehlgeschlagen: /).waitFor();
      await karte.getByRole('button', { name: 'Details' }).click();
      await noAxeViolations(page, 'the German recovery card');

      // Back to English: the same card, in English again.
      await page.getByRole('combobox', { name: 'Sprache' }).selectOption({ label: 'English' });
      await page.locator('html[lang="en"]').waitFor({ state: 'attached' });
      await c.getByText(summaryEn, { exact: true }).waitFor();
      await c.getByRole('cell', { name: /^the workspace folder is there/ }).waitFor();
      assert.equal(await c.getByText(summaryDe, { exact: true }).count(), 0, 'no German summary left');
      assert.equal(await c.getByRole('cell', { name: /^der Arbeitsbereich-Ordner ist vorhanden/ }).count(), 0, 'no German evidence left');
      assert.equal(await c.getByRole('button', { name: 'Resume' }).count(), 1);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

describe('a runtime worker that cannot load (1280×800)', () => {
  const WASM = '**/lifeline_runtime_bg.wasm';

  test('the card says the runtime could not start; once it loads, Start fresh runs the next command', async () => {
    // The first runtime worker starts at boot, before the page listens:
    // its failure reaches the controller through the events replayed when
    // the page adopts it.
    const browser = await openApp(VIEWPORTS.desktop, ({ context }) =>
      context.route(WASM, (route) => route.abort('internetdisconnected')),
    );
    try {
      const { page, context } = browser;
      const c = card(page);
      await c.getByText("The session's runtime did not start.").waitFor({ timeout: 30_000 });
      await c.getByRole('button', { name: 'Details' }).click();
      await c.getByText(/^the runtime could not start: /).waitFor();

      await context.unroute(WASM);
      await c.getByRole('button', { name: 'Start fresh' }).click();
      await c.getByRole('button', { name: 'Confirm start fresh' }).click();
      await c.waitFor({ state: 'detached', timeout: 30_000 });
      await send(page, '$ echo loaded');
      const block = commandBlock(page, 'echo loaded');
      await waitOutcome(block, 'completed');
      await block.locator('pre').filter({ hasText: 'loaded' }).waitFor();
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});
