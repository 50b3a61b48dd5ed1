// Recovery in a real browser: host loss (reload), a controller worker that
// dies while the page lives, and two tabs handing the journal over.
// Everything synchronises on what the page shows (roles, names, outcome
// texts from DESIGN.md), never on sleeps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { commandBlock, send, waitOutcome } from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';

const UNCERTAIN = /^(may have started|lost)$/;

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  describe(`host loss at ${viewport.width}×${viewport.height} (${name})`, () => {
    test('a reload during `sleep 30` shows it as uncertain and never runs anything again', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ echo start >> marks.txt\n$ sleep 30');
        await waitOutcome(commandBlock(page, 'echo start >> marks.txt'), 'completed');
        await waitOutcome(commandBlock(page, 'sleep 30'), 'running');

        await page.reload();
        await waitConnected(page);
        await waitOutcome(commandBlock(page, 'sleep 30'), UNCERTAIN);
        await waitOutcome(commandBlock(page, 'echo start >> marks.txt'), 'completed');
        // The turn ends as interrupted; only then is "nothing re-ran" a fact.
        await page
          .getByRole('log', { name: 'Transcript' })
          .getByText(/did not run it again/)
          .first()
          .waitFor();
        assert.equal(await commandBlock(page, 'sleep 30').count(), 1, 'one block for sleep, not a rerun');
        assert.deepEqual(await readWorkspaceFile(page, 'marks.txt'), ['start\n']);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('after a reload, commands beyond the recent window show their output read back from the journal', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        // More settled commands than the projection keeps events for (16):
        // the oldest keep no output in memory or in the snapshot.
        // Two digits each: no command line is a prefix of another's.
        const outs = Array.from({ length: 20 }, (_, i) => `out-${String(i).padStart(2, '0')}`);
        const lines = outs.map((o) => `echo ${o}`);
        await send(page, lines.map((l) => `$ ${l}`).join('\n'));
        await waitOutcome(commandBlock(page, lines[19]), 'completed');

        await page.reload();
        await waitConnected(page);
        for (const [i, line] of lines.entries()) {
          const block = commandBlock(page, line);
          await waitOutcome(block, 'completed');
          await block.locator('pre.output').filter({ hasText: outs[i] }).waitFor();
        }
        const log = page.getByRole('log', { name: 'Transcript' });
        await log.getByText('Loading output…').first().waitFor({ state: 'detached' });
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}

describe('controller restart while the page lives (1280×800)', () => {
  test('a controller killed mid-command is replaced; the output is complete and unique', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      const count = 30;
      const line = Array.from({ length: count }, (_, i) => `echo ${i + 1}; sleep 0.2`).join('; ');
      await send(page, `$ ${line}`);
      const block = commandBlock(page, line);
      await waitOutcome(block, 'running');
      await block.locator('pre').filter({ hasText: /\b3\b/ }).first().waitFor();

      const controller = page.workers().find((w) => w.url().includes('controller'));
      assert.ok(controller, 'the controller worker is visible to the test');
      // Test-only: the worker closes itself, as a crash would end it. The page
      // notices through missed heartbeats; nothing in the app offers this.
      await controller.evaluate(() => setTimeout(() => self.close(), 0));

      // The notice says what happened, once the runtime dialed back in.
      await page
        .getByText('The controller worker stopped and was restarted; the running command continued.')
        .waitFor({ timeout: 30_000 });
      await waitOutcome(block, 'completed', 60_000);
      const text = await block.locator('pre').first().textContent();
      const numbers = text.split('\n').filter((l) => l.trim() !== '').map(Number);
      assert.deepEqual(numbers, Array.from({ length: count }, (_, i) => i + 1));
      await waitConnected(page);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });

  test('a controller killed while nothing runs says that no command was running', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await send(page, '$ echo done');
      await waitOutcome(commandBlock(page, 'echo done'), 'completed');
      const controller = page.workers().find((w) => w.url().includes('controller'));
      assert.ok(controller, 'the controller worker is visible to the test');
      await controller.evaluate(() => setTimeout(() => self.close(), 0));
      await page
        .getByText('The controller worker stopped and was restarted; no commands were running.')
        .waitFor({ timeout: 30_000 });
      assert.equal(await page.getByText(/running command continued/).count(), 0);
      await waitConnected(page);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

const runtimeWorkers = (page) => page.workers().filter((w) => w.url().endsWith('/runtime.js'));

/** Resolves once every runtime worker `page` has now has ended; fails
 * after Playwright's default timeout if one does not. */
function runtimeWorkersEnded(page) {
  return Promise.all(
    runtimeWorkers(page).map(async (worker) => {
      const closed = worker.waitForEvent('close');
      if (page.workers().includes(worker)) return closed;
      closed.catch(() => {});
    }),
  );
}

/** The browser's first tab leading, and a second one following it. */
async function twoTabs(browser) {
  const first = browser.page;
  await first.goto(BASE_URL);
  await waitConnected(first);
  const second = await browser.context.newPage();
  await second.goto(BASE_URL);
  await second.getByRole('status').filter({ hasText: 'Following another tab (read-only)' }).waitFor();
  return { first, second };
}

describe('two tabs (1280×800)', () => {
  test('a follower ignores a broadcast it cannot read, says so, and keeps following', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { first, second } = await twoTabs(browser);

      // What a broken or hostile tab of the same origin could post.
      await first.evaluate(() => {
        const channel = new BroadcastChannel('lifeline-journal');
        channel.postMessage('{"Entries":{"protocol":');
        channel.close();
      });
      await second
        .locator('.notices')
        .getByText('a message from another tab could not be read; it was ignored')
        .waitFor();

      await send(first, '$ echo after');
      await waitOutcome(commandBlock(second, 'echo after'), 'completed');
      await commandBlock(second, 'echo after').locator('pre').filter({ hasText: 'after' }).waitFor();
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });

  test('the second tab follows live, then takes over when the first closes', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { first, second } = await twoTabs(browser);
      assert.equal(await second.getByRole('button', { name: 'Send' }).isDisabled(), true);
      // Each tab's boot starts a runtime worker before it knows its role:
      // the leader's runs its session; the follower's ends unused.
      assert.equal(runtimeWorkers(first).length, 1, 'the leader runs one runtime worker');
      await runtimeWorkersEnded(second);
      assert.equal(runtimeWorkers(second).length, 0, 'the follower runs no runtime worker');

      await send(first, '$ echo one; sleep 60');
      const followed = commandBlock(second, 'echo one; sleep 60');
      await waitOutcome(followed, 'running');
      await followed.locator('pre').filter({ hasText: 'one' }).waitFor();

      await first.close();
      await waitConnected(second);
      assert.equal(runtimeWorkers(second).length, 1, 'the new leader started its own runtime worker');
      await waitOutcome(followed, UNCERTAIN);
      assert.equal(await commandBlock(second, 'echo one; sleep 60').count(), 1);
      assert.equal((await followed.locator('pre').first().textContent()).match(/one/g).length, 1);
      await second.getByRole('log', { name: 'Transcript' }).getByText(/did not run it again/).first().waitFor();
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});
