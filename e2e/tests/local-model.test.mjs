// A local GGUF model run in the browser through llama.cpp in WebAssembly
// (issue 16), on tiny models this test makes with llama.cpp's own writer
// (e2e/lib/tiny_gguf.py; `cargo xtask test` installs PyPI `gguf` into a venv
// and passes its Python as LIFELINE_GGUF_PYTHON). Their greedy output is
// scripted, so the reply is known exactly. Synchronised on what the page
// shows, at 1280×800 and 390×844.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, openApp, openBrowser, waitConnected, waitServiceWorkerReady } from '../lib/browser.mjs';
import { card, explainFailure, send, streaming, transcript, waitRunning } from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';

const ANSWER = 'Hello from a tiny local model.';
let dir;
const model = (script) => join(dir, `${script}.gguf`);

before(async () => {
  const python = process.env.LIFELINE_GGUF_PYTHON;
  assert.ok(python, 'LIFELINE_GGUF_PYTHON names a Python with the gguf package (cargo xtask test e2e sets it)');
  dir = await mkdtemp(join(tmpdir(), 'lifeline-gguf-'));
  for (const script of ['answer', 'loop', 'broken', 'tool']) {
    execFileSync(python, ['lib/tiny_gguf.py', script, model(script)]);
  }
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The loop model's reply, long enough that Stop or a reload comes while it
 * is still being generated, on a machine under load too (the default of
 * 512 tokens was over before a loaded CI machine had pressed Stop). */
const LONG_REPLY = { context: 16384, maxTokens: 16000 };

const dialogOf = (page) => page.getByRole('dialog', { name: 'Profiles' });

/** Fills the form for a local profile with `file` (a path or a buffer). */
async function pickModel(page, name, file) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = dialogOf(page);
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: 'Local model (GGUF file)' });
  await dialog.getByLabel('Model file', { exact: true }).setInputFiles(file);
  return dialog;
}

/** Saves a local profile with the tiny `script` model and uses it, with
 * the `tools` given (and a step budget of `maxSteps`, a context of
 * `context` tokens and replies of up to `maxTokens`). */
async function useLocalModel(page, name, script, { tools = [], maxSteps, context, maxTokens } = {}) {
  const dialog = await pickModel(page, name, model(script));
  await dialog.getByText(/llama, [\d,]+ parameters, trained context [\d,]+ tokens/).waitFor({ timeout: 30_000 });
  // The tools' description alone is over 2,000 tokens of a character-level
  // vocabulary: more than most tiny models' context of 1,024.
  for (const tool of ['read_file', 'write_file', 'list_files', 'run_command']) {
    const box = dialog.getByLabel(tool, { exact: true });
    if (tools.includes(tool)) await box.check();
    else await box.uncheck();
  }
  if (maxSteps) await dialog.getByLabel('Max steps', { exact: true }).fill(String(maxSteps));
  if (context) await dialog.getByLabel('Context size (tokens)', { exact: true }).fill(String(context));
  if (maxTokens) await dialog.getByLabel('Max reply tokens', { exact: true }).fill(String(maxTokens));
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: name });
  await item.getByRole('button', { name: 'Use for this session' }).click();
  await item.getByText('(selected)').waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  await waitConnected(page);
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`a local GGUF model at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('the picked file shows its header facts and the scripted answer streams', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        const dialog = await pickModel(page, 'Tiny', model('answer'));
        await dialog.getByText('answer.gguf: 269,120 bytes, llama, 129,344 parameters').waitFor({ timeout: 30_000 });
        const { violations } = await new AxeBuilder({ page }).include('dialog').analyze();
        assert.deepEqual(violations.map((v) => v.id), [], 'axe-core on the local model form');
        await page.keyboard.press('Escape');
        await useLocalModel(page, 'Tiny answer', 'answer');
        await send(page, 'Say hello.');
        await transcript(page).getByText(ANSWER).last().waitFor({ timeout: 60_000 });
        // Edited, the saved profile shows the same facts (the controller
        // words them: the page does not decode the model's spec).
        await page.getByRole('button', { name: 'Profiles' }).click();
        const saved = dialogOf(page).getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: 'Tiny answer' });
        await saved.getByRole('button', { name: 'Edit' }).click();
        await dialogOf(page).getByText('answer.gguf: 269,120 bytes, llama, 129,344 parameters, trained context 1,024 tokens; loaded with a context of 1,024 tokens').waitFor();
        assert.equal(await dialogOf(page).getByLabel('Provider', { exact: true }).inputValue(), 'local');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('an offline start with the local profile answers', async () => {
      const browser = await openApp(viewport);
      const { page, context } = browser;
      try {
        await waitServiceWorkerReady(page);
        // Picking the file keeps the engine for offline use: the facts show
        // once it is kept, and no turn has loaded the model yet.
        await useLocalModel(page, 'Tiny offline', 'answer');
        await context.setOffline(true);
        await page.reload();
        await waitConnected(page);
        assert.ok(await page.evaluate(() => navigator.serviceWorker.controller !== null));
        await send(page, 'Say hello offline.');
        await transcript(page).getByText(ANSWER).last().waitFor({ timeout: 60_000 });
        assert.deepEqual(browser.errors, []);
      } finally {
        await context.setOffline(false);
        await browser.close();
      }
    });

    test('a load shows its progress and Stop cancels it: the turn ends stopped, nothing uncertain', async () => {
      // No service worker: the engine's files come from the network, where
      // the test holds them so the load stays in progress until Stop.
      const browser = await openBrowser(viewport, { serviceWorkers: 'block' });
      const { page, context } = browser;
      let release;
      const held = new Promise((resolve) => (release = resolve));
      try {
        await page.goto(BASE_URL);
        await waitConnected(page);
        await useLocalModel(page, 'Tiny held', 'answer');
        await context.route('**/wllama/index.js', async (route) => {
          await held;
          await route.continue().catch(() => {});
        });
        await send(page, 'Say hello.');
        // Bytes and seconds, moving while the load waits for its engine.
        await page.getByText(/^loading the local model: 0 of 269,120 bytes, [1-9]\d* s$/).waitFor({ timeout: 30_000 });
        await page.getByRole('button', { name: 'Stop' }).click();
        await transcript(page).getByText(/stopped by the user while the local model was loading/).first().waitFor({ state: 'attached', timeout: 10_000 });
        await page.getByText(/loading the local model/).waitFor({ state: 'detached' });
        // Ended for certain: no recovery card, nothing streams, no Stop.
        assert.equal(await card(page).count(), 0, 'a stopped load leaves nothing uncertain');
        assert.equal(await streaming(page).count(), 0);
        // The engine arrives late; the next turn loads and answers.
        release();
        await context.unroute('**/wllama/index.js');
        await send(page, 'Say hello again.');
        await transcript(page).getByText(ANSWER).last().waitFor({ timeout: 60_000 });
      } finally {
        release();
        await browser.close();
      }
    });

    test('sampling settings start at defaults, are kept per profile, and a bad one is refused', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        const dialog = await pickModel(page, 'Tiny tuned', model('answer'));
        await dialog.getByText(/answer\.gguf: 269,120 bytes/).waitFor({ timeout: 30_000 });
        const field = (label) => dialog.getByLabel(label, { exact: true });
        const values = async () => {
          const out = [];
          for (const label of ['Temperature', 'Top-p', 'Max reply tokens', 'Context size (tokens)']) {
            out.push(await field(label).inputValue());
          }
          return out;
        };
        // The defaults, within the model's trained context of 1,024.
        assert.deepEqual(await values(), ['0.7', '0.9', '512', '1024']);
        await field('Temperature').fill('0.2');
        await field('Top-p').fill('.5');
        await field('Max reply tokens').fill('64');
        await field('Context size (tokens)').fill('512');
        await dialog.getByRole('button', { name: 'Save profile' }).click();
        const saved = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: 'Tiny tuned' });
        await saved.getByRole('button', { name: 'Edit' }).click();
        assert.deepEqual(await values(), ['0.2', '0.5', '64', '512']);
        await dialog.getByText(/loaded with a context of 512 tokens/).waitFor();
        // Out of range: refused with what it must be; the stored profile
        // keeps its settings.
        await field('Temperature').fill('3');
        await dialog.getByRole('button', { name: 'Save profile' }).click();
        await page.getByText(/the temperature must be 0 to 2/).first().waitFor({ timeout: 10_000 });
        // The refused form stays as typed, local model and all, to be mended.
        assert.deepEqual(await values(), ['3', '0.5', '64', '512']);
        await dialog.getByText(/loaded with a context of 512 tokens/).waitFor();
        // A later change to the list (here: choosing the saved profile) is
        // not the refused save's confirmation: the form stays, and nothing
        // says it was saved.
        await saved.getByRole('button', { name: 'Use for this session' }).click();
        await saved.getByText('(selected)').waitFor();
        assert.deepEqual(await values(), ['3', '0.5', '64', '512']);
        assert.doesNotMatch(await dialog.getByRole('status').first().innerText(), /Saved/);
        await page.keyboard.press('Escape');
        await page.getByRole('button', { name: 'Profiles' }).click();
        await saved.getByRole('button', { name: 'Edit' }).click();
        assert.deepEqual(await values(), ['0.2', '0.5', '64', '512']);
      } finally {
        await browser.close();
      }
    });

    test('a scripted tool call writes a workspace file through the command journal', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        // The tool model answers every request with the same call. With a
        // budget of two steps the first call runs; the second request's call
        // is not admitted (the budget is spent) and the turn ends.
        await useLocalModel(page, 'Tiny tool', 'tool', { tools: ['write_file'], maxSteps: 2 });
        await send(page, 'Write a note.');
        const blocks = transcript(page).getByRole('group', { name: /^Command: / });
        await blocks.first().getByText('completed', { exact: true }).waitFor({ timeout: 60_000 });
        assert.equal(await blocks.count(), 1, 'the call ran once, as one journalled command');
        assert.deepEqual(await readWorkspaceFile(page, 'note.txt'), ['written by a tiny model']);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a file that is not GGUF is refused clearly', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        const dialog = await pickModel(page, 'Not a model', {
          name: 'notes.gguf',
          mimeType: 'application/octet-stream',
          buffer: Buffer.from('these are notes, not a model'),
        });
        await dialog
          .getByRole('status')
          .getByText('this file cannot be used as a local model: it is not a GGUF model', { exact: true })
          .waitFor({ timeout: 30_000 });
        await dialog.getByRole('button', { name: 'Save profile' }).click();
        await dialog.getByText('Choose a GGUF model file.').waitFor();
      } finally {
        await browser.close();
      }
    });

    test("a file picked while the import's code cannot be fetched is said, and picking it again imports it", async () => {
      // The import is in a module of the controller's own (with a profile's
      // save), fetched the first time.
      const browser = await openApp(viewport, ({ context }) =>
        context.route('**/split_profile_save.wasm', (route) => route.abort('internetdisconnected')),
      );
      try {
        const { page, context } = browser;
        const dialog = await pickModel(page, 'Tiny', model('answer'));
        await dialog
          .getByRole('status')
          .getByText(/part of the app could not be loaded, so nothing was done/i)
          .waitFor({ timeout: 30_000 });
        await context.unroute('**/split_profile_save.wasm');
        // The same file again: the field was emptied, so this is a change.
        await dialog.getByLabel('Model file', { exact: true }).setInputFiles(model('answer'));
        await dialog.getByText(/llama, [\d,]+ parameters, trained context [\d,]+ tokens/).waitFor({ timeout: 30_000 });
      } catch (failure) {
        throw await explainFailure(browser, failure);
      } finally {
        await browser.close();
      }
    });

    test('Stop ends generation at once and keeps the partial text', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await useLocalModel(page, 'Tiny loop', 'loop', LONG_REPLY);
        await send(page, 'Count.');
        await streaming(page).getByText(/Counting: tick tock/).waitFor({ timeout: 60_000 });
        await page.getByRole('button', { name: 'Stop' }).click();
        await transcript(page).getByText(/stopped|cancelled/i).last().waitFor({ timeout: 10_000 });
        await transcript(page).getByText(/Counting: tick/).last().waitFor();
      } catch (failure) {
        throw await explainFailure(browser, failure);
      } finally {
        await browser.close();
      }
    });

    test('bytes that are not UTF-8 end the reply as broken and keep its text', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await useLocalModel(page, 'Tiny broken', 'broken');
        await send(page, 'Break.');
        await transcript(page).getByText(/not UTF-8/).filter({ visible: true }).first().waitFor({ timeout: 60_000 });
        await transcript(page).getByText(/Broken reply/).filter({ visible: true }).first().waitFor();
      } finally {
        await browser.close();
      }
    });

    test('a reload mid-generation leaves the request uncertain and nothing runs again', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await useLocalModel(page, 'Tiny loop', 'loop', LONG_REPLY);
        await send(page, 'Count.');
        await streaming(page).getByText(/Counting: tick tock/).waitFor({ timeout: 60_000 });
        await page.reload();
        await waitConnected(page);
        // The recovery card's details (folded) name the request.
        await card(page).waitFor({ timeout: 30_000 });
        await card(page)
          .getByText(/reply to request .* was lost; it was not resent/)
          .waitFor({ state: 'attached', timeout: 30_000 });
        // The controller resumes the session by itself after a reload,
        // and Stop is offered while that start lasts (it stops the start).
        // Once it runs, nothing was resent: no turn is running, so nothing
        // streams and Stop is not offered.
        await waitRunning(page);
        assert.equal(await streaming(page).count(), 0, 'nothing streams after the reload');
        assert.equal(await page.getByRole('button', { name: 'Stop' }).isEnabled().catch(() => false), false);
      } finally {
        await browser.close();
      }
    });
  });
}
