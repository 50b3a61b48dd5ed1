// The transcript people work in (issue 13, item 2), at both viewports:
// ANSI colours in command output as classes, replies rendered as markdown
// (raw HTML and unsafe links stay text), copy buttons, times, long prompts
// collapsed, and following new output with "Jump to latest".
// Synchronised on what the page shows, never on sleeps.
// With LIFELINE_SCREENSHOTS=<dir> it also saves its screens there
// (docs/screenshots for the user guide); CI does not set it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, openApp } from '../lib/browser.mjs';
import { addProfile, commandBlock, send, transcript } from '../lib/ui.mjs';
import { startStubProvider } from '../lib/stub-provider.mjs';

/** Resolves once `locator`'s element has held still for `frames` frames in
 * a row: its place, its size and its text's length the same, and that text
 * longer than `min` characters. Output is drawn a few KiB per frame and
 * the log follows it, so a click or a read before that can meet a block
 * that still moves or grows. */
const still = (locator, frames, min = 0) =>
  locator.evaluate(
    (el, [frames, min]) =>
      new Promise((done) => {
        let last = '';
        let same = 0;
        const check = () => {
          const r = el.getBoundingClientRect();
          const length = el.textContent.length;
          const now = `${r.top} ${r.height} ${length}`;
          same = now === last && length > min ? same + 1 : 0;
          last = now;
          if (same >= frames) return done();
          requestAnimationFrame(check);
        };
        check();
      }),
    [frames, min],
  );

const ESC = '\u001b';
const SHOTS = process.env.LIFELINE_SCREENSHOTS;

async function shot(page, name) {
  if (!SHOTS) return;
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

let stub;
before(async () => {
  stub = await startStubProvider();
});
after(async () => {
  await stub?.close();
});

async function clipboard(page) {
  return page.evaluate(() => navigator.clipboard.readText());
}

/** The transcript's scroll position: how far from its bottom. */
async function fromBottom(page) {
  return transcript(page).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
}

/** The bytes `seq 1 n` prints. */
const seqBytes = (n) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('').length;

/** Clicks the block's Download output; the file's name and its bytes (as latin1 text, one character a byte). */
async function download(page, block) {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    block.getByRole('button', { name: 'Download output' }).click(),
  ]);
  let text = '';
  for await (const chunk of await file.createReadStream()) text += chunk.toString('latin1');
  return { name: file.suggestedFilename(), text };
}

/** Every turn has its recorded reply: nothing runs. */
async function idle(page) {
  await page.waitForFunction(
    () => document.querySelectorAll('.turn').length === document.querySelectorAll('.turn > .reply').length,
    undefined,
    { timeout: 30_000 },
  );
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`the transcript at ${viewport.width}×${viewport.height} (${vname})`, () => {
    let browser;
    before(async () => {
      browser = await openApp(viewport);
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
        origin: new URL(BASE_URL).origin,
      });
    });
    after(async () => {
      await browser?.close();
    });

    test('ANSI colours in output are shown as classes, never as escapes; times and copy', async () => {
      const { page } = browser;
      // (`;` would end the command in the shell: one parameter per sequence.)
      await send(page, `$ echo ${ESC}[31mred${ESC}[0m plain ${ESC}[1m${ESC}[32mbold green${ESC}[0m`);
      const block = transcript(page).locator('.command').filter({ hasText: 'bold green' });
      await block.getByText('completed', { exact: true }).waitFor();
      const output = block.locator('pre.output').first();
      await output.locator('span.a-f1', { hasText: 'red' }).waitFor();
      assert.equal(await output.locator('span.a-f2.a-bold').textContent(), 'bold green');
      const shown = await output.textContent();
      assert.equal(shown, 'red plain bold green\n');
      assert.ok(!shown.includes(ESC) && !shown.includes('[31m'));
      // The finished command says how long it took; the turn when it was.
      await block.getByText(/^took \d+(\.\d)? s$/).waitFor();
      assert.match(await transcript(page).locator('.prompt time').first().textContent(), /^\d\d:\d\d$/);

      await block.getByRole('button', { name: 'Copy output' }).click();
      await block.getByRole('button', { name: 'Copied' }).waitFor();
      const copied = await clipboard(page);
      assert.ok(copied.startsWith('$ echo '), copied);
      assert.ok(copied.endsWith('red plain bold green\n'), copied);

      // The built-in agent's reply is markdown: its backticks are code.
      const reply = transcript(page).locator('.turn .reply').last();
      await reply.locator('.md code').first().waitFor();
      assert.ok(!(await reply.locator('.md').textContent()).includes('`'));
      await reply.getByRole('button', { name: 'Copy reply' }).click();
      await reply.getByRole('button', { name: 'Copied' }).waitFor();
      assert.equal(await clipboard(page), await reply.locator('.md').textContent());
      await shot(page, `transcript-output-${vname}`);
    });

    test('a running command shows its elapsed time', async () => {
      const { page } = browser;
      await send(page, '$ sleep 3');
      const block = commandBlock(page, 'sleep 3');
      await block.getByText(/^running for \d+(\.\d)? s$/).waitFor({ timeout: 30_000 });
      await block.getByText(/^took \d+(\.\d)? s$/).waitFor({ timeout: 30_000 });
      await idle(page);
    });

    test('a long prompt is collapsed with Show more', async () => {
      const { page } = browser;
      const long = Array.from({ length: 20 }, (_, i) => `line ${i + 1} of a long message`).join('\n');
      await send(page, long);
      // The reply first: while it lands the log follows the bottom, and if
      // the button moves between press and release the click goes to what
      // holds both, not the button (Playwright checks only the press).
      await idle(page);
      const prompt = transcript(page).locator('.prompt').last();
      const more = prompt.getByRole('button', { name: 'Show more' });
      await more.waitFor();
      assert.equal(await more.getAttribute('aria-expanded'), 'false');
      const collapsed = await prompt.locator('.prompt-text').evaluate((el) => el.clientHeight);
      await more.click();
      const less = prompt.getByRole('button', { name: 'Show less' });
      assert.equal(await less.getAttribute('aria-expanded'), 'true');
      const open = await prompt.locator('.prompt-text').evaluate((el) => el.clientHeight);
      assert.ok(open > collapsed, `${open} > ${collapsed}`);
    });

    test('a press held while new output lands is not lost: the log follows the bottom once it is released', async () => {
      const { page } = browser;
      await transcript(page).evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await send(page, '$ echo pressed-here');
      const block = commandBlock(page, 'echo pressed-here');
      await block.getByText('completed', { exact: true }).waitFor();
      await idle(page);
      const copy = block.getByRole('button', { name: 'Copy output' });
      const box = await copy.boundingBox();
      const log = await transcript(page).boundingBox();
      assert.ok(box.y >= log.y && box.y + box.height <= log.y + log.height, 'Copy output is in view at the bottom');
      const before = await transcript(page).evaluate((el) => el.scrollHeight);
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      // Sent from the keyboard, with the button still held down.
      const message = page.getByRole('textbox', { name: 'Message' });
      await message.fill('$ seq 1 80');
      await message.press('Enter');
      await page.waitForFunction(
        (height) => document.querySelector('[role="log"]').scrollHeight > height + 200,
        before,
        { timeout: 30_000 },
      );
      // Two frames: the one that follows the bottom has had its turn.
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      await page.mouse.up();
      await block.getByRole('button', { name: 'Copied' }).waitFor({ timeout: 5_000 });
      assert.ok((await clipboard(page)).startsWith('$ echo pressed-here'));
      await commandBlock(page, 'seq 1 80').getByText('completed', { exact: true }).waitFor();
      await idle(page);
      await page.waitForFunction(() => {
        const el = document.querySelector('[role="log"]');
        return el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
      });
    });

    test('the transcript follows new output at the bottom; scrolled up, Jump to latest brings it back', async () => {
      const { page } = browser;
      // Back at the bottom (an earlier click may have scrolled the log up).
      await transcript(page).evaluate((el) => el.scrollTo(0, el.scrollHeight));
      const many = Array.from({ length: 6 }, (_, i) => `$ seq 1 ${30 + i}`).join('\n');
      await send(page, many);
      await commandBlock(page, 'seq 1 35').getByText('completed', { exact: true }).waitFor();
      await idle(page);
      await page.waitForFunction(() => {
        const el = document.querySelector('[role="log"]');
        return el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
      });
      const jump = page.getByRole('button', { name: 'Jump to latest' });
      assert.equal(await jump.count(), 0);

      await transcript(page).evaluate((el) => el.scrollTo(0, 0));
      await jump.waitFor();
      await send(page, '$ echo after-the-jump');
      await commandBlock(page, 'echo after-the-jump').getByText('completed', { exact: true }).waitFor();
      await idle(page);
      // Scrolled up, the reader's place is kept.
      assert.ok((await transcript(page).evaluate((el) => el.scrollTop)) < 50);
      await jump.click();
      await page.waitForFunction(() => {
        const el = document.querySelector('[role="log"]');
        return el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
      });
      await jump.waitFor({ state: 'hidden' });
      assert.ok((await fromBottom(page)) <= 8);
    });

    test('a large output shows whole lines of its head and tail; View full output pages through it; Download saves it', async () => {
      const { page } = browser;
      const n = 300000;
      // 1,988,895 bytes: 64 KiB inline, the rest in artifacts.
      const total = seqBytes(n);
      await send(page, `$ seq 1 ${n}`);
      const block = commandBlock(page, `seq 1 ${n}`);
      await block.getByText('completed', { exact: true }).waitFor({ timeout: 60_000 });
      const numbers = (text) => text.split('\n').filter((l) => l !== '').map(Number);
      const consecutive = (xs) => xs.every((x, i) => i === 0 || x === xs[i - 1] + 1);
      // The head ends at a line end: no number cut in two. (It is laid
      // out over a few frames, 4 KiB each: wait until all of it is, that
      // is until a frame added nothing to it; the clicks below must not
      // meet a log that still scrolls to follow it.)
      await block.getByText('Last lines:').waitFor();
      await still(block.locator('pre.output').first(), 1, 60000);
      const head = await block.locator('pre.output').first().textContent();
      assert.ok(head.endsWith('\n'));
      const headNumbers = numbers(head);
      assert.equal(headNumbers[0], 1);
      assert.ok(consecutive(headNumbers));
      // The tail: whole lines through the last one.
      const tail = numbers(await block.locator('.tail pre').textContent());
      assert.equal(tail.at(-1), n);
      assert.ok(tail.length > 10 && consecutive(tail), `${tail.slice(0, 3)}`);
      // Copy output copies what is shown, head and tail, and says that it
      // is not all of it, on the clipboard and on the button.
      await block.getByRole('button', { name: 'Copy output' }).click();
      await block.getByRole('button', { name: 'Copied what is shown' }).waitFor();
      const copied = await clipboard(page);
      assert.ok(copied.startsWith(`$ seq 1 ${n}\n1\n2\n3\n`), copied.slice(0, 40));
      assert.ok(copied.includes(`\n[…]\n`), 'the head and the tail are told apart');
      assert.ok(
        copied.endsWith(`${n}\n\n[Only the output shown was copied; Download output has all of it.]`),
        copied.slice(-120),
      );
      assert.ok(copied.length < total, `${copied.length} < ${total}`);

      await page.evaluate(() => {
        window.__long = [];
        new PerformanceObserver((list) => window.__long.push(...list.getEntries().map((e) => e.duration))).observe({
          type: 'longtask',
        });
      });
      const viewFull = block.getByRole('button', { name: 'View full output' });
      assert.equal(await viewFull.getAttribute('aria-expanded'), 'false');
      // The block at rest before the click: its place, size and text the
      // same for five frames. A CI run once found aria-expanded still
      // false here, at the phone's width, after the head had stopped
      // growing; why is not proven, and a block still moving under the
      // click is what this rules out.
      await still(block, 5);
      await viewFull.click();
      assert.equal(await viewFull.getAttribute('aria-expanded'), 'true');
      const view = block.getByRole('region', { name: `Full output: seq 1 ${n}` });
      const full = view.locator('pre.full');
      await view.getByText(new RegExp(`^Bytes 0–\\d+ of ${total}$`)).waitFor();
      assert.ok((await full.textContent()).startsWith('1\n2\n3\n'));
      await view.getByRole('button', { name: 'End', exact: true }).click();
      await view.getByText(new RegExp(`^Bytes \\d+–${total} of ${total}$`)).waitFor();
      assert.ok((await full.textContent()).endsWith(`${n - 1}\n${n}\n`));
      // Scrolling up reads earlier pages; the view never holds more than four.
      for (let i = 0; i < 4; i += 1) {
        const before = await view.locator('.note').textContent();
        await full.evaluate((el) => el.scrollTo(0, 0));
        await page.waitForFunction(
          ([el, old]) => el.textContent !== old,
          [await view.locator('.note').elementHandle(), before],
        );
        assert.ok((await full.locator(':scope > span').count()) <= 4);
      }
      // The first and last pages start and end wherever their byte ranges
      // do (maybe inside a line); between, pages join without a gap.
      const shown = numbers(await full.textContent()).slice(1, -1);
      assert.ok(shown.length > 1000 && consecutive(shown), 'pages join without a gap or a cut number');
      const long = await page.evaluate(() => window.__long);
      console.log(`transcript: ${vname}: long tasks while paging ${total} bytes: ${JSON.stringify(long)}`);

      const saved = await download(page, block);
      assert.match(saved.name, /^output-.*\.txt$/);
      assert.equal(saved.text.length, total);
      assert.ok(saved.text.endsWith(`${n}\n`));
    });

    test('a large output that left the recent window (its output in the journal only) still downloads whole', async () => {
      const { page } = browser;
      const n = 25000;
      const total = seqBytes(n);
      await send(page, `$ seq 1 ${n}`);
      const block = commandBlock(page, `seq 1 ${n}`);
      await block.getByText('completed', { exact: true }).waitFor({ timeout: 60_000 });
      await idle(page);
      // Sixteen commands settle after it: it leaves the recent window, and
      // its turn having ended, it is kept small (its head in the journal).
      await send(page, Array.from({ length: 16 }, (_, i) => `$ echo later ${i}`).join('\n'));
      await commandBlock(page, 'echo later 15').getByText('completed', { exact: true }).waitFor({ timeout: 60_000 });
      await idle(page);
      const { text } = await download(page, block);
      assert.equal(text.length, total);
      assert.ok(text.startsWith('1\n2\n3\n'), text.slice(0, 20));
      assert.ok(text.endsWith(`${n - 1}\n${n}\n`));
    });

    test('a model reply is markdown: no raw HTML, safe links only, code with Copy code', async () => {
      const { page } = browser;
      await addProfile(page, stub.profile('Stub OpenAI', 'sk-transcript-test'));
      await send(page, 'Please reply in markdown.');
      const md = transcript(page).locator('.request .md').last();
      await md.locator('strong', { hasText: 'bold words' }).waitFor({ timeout: 30_000 });
      assert.equal(await md.locator('.md-h').first().textContent(), 'Summary');
      assert.equal(await md.locator('code').first().textContent(), 'inline code');
      assert.equal(await md.locator('li').count(), 2);
      const link = md.getByRole('link', { name: 'the docs' });
      assert.equal(await link.getAttribute('href'), 'https://example.com/docs');
      assert.equal(await link.getAttribute('target'), '_blank');
      assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
      // The javascript: link is its label only; the raw HTML is text.
      assert.equal(await md.getByRole('link', { name: 'bad link' }).count(), 0);
      assert.equal(await transcript(page).locator('a[href^="javascript"], img, script').count(), 0);
      assert.ok((await md.textContent()).includes('<img src=x onerror="window.__pwned=1">'));
      assert.equal(await page.evaluate(() => window.__pwned), undefined);

      const code = md.locator('.code-block');
      assert.equal(await code.locator('pre code').textContent(), 'echo copied-from-code\n');
      await code.getByRole('button', { name: 'Copy code' }).click();
      await code.getByRole('button', { name: 'Copied' }).waitFor();
      assert.equal(await clipboard(page), 'echo copied-from-code\n');
      await idle(page);
      await shot(page, `transcript-markdown-${vname}`);
    });

    test('axe-core finds no accessibility violations in the transcript', async () => {
      const { violations } = await new AxeBuilder({ page: browser.page }).analyze();
      assert.deepEqual(
        violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(', ')}`),
        [],
      );
      assert.deepEqual(browser.errors, []);
    });
  });
}
