// The app shell at desktop and phone sizes: named regions, the real worker
// round trip, accessibility, installability and offline start.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { BASE_URL, VIEWPORTS, onlyRefusedFetches, openApp, openBrowser, waitConnected, waitServiceWorkerReady } from '../lib/browser.mjs';
import { commandBlock, send } from '../lib/ui.mjs';

/** Opens the app at desktop size with a split module's file refused, as a
 * network gone would, and runs `body(page, allow)`; `allow()` lets the file
 * load again. Afterwards the refused fetch, as the browser and the loader
 * log it, must be the only error. */
async function whileRefused(module, body) {
  const refused = `**/${module}.wasm`;
  const browser = await openApp(VIEWPORTS.desktop, ({ context }) =>
    context.route(refused, (route) => route.abort('internetdisconnected')),
  );
  try {
    await body(browser.page, () => browser.context.unroute(refused));
    assert.ok(onlyRefusedFetches(browser.errors), browser.errors.join('\n'));
  } finally {
    await browser.close();
  }
}

/** The URLs `page` asks for that name a split module, as it asks. */
function fetchesOf(page, module) {
  const fetched = [];
  page.on('request', (request) => {
    if (request.url().includes(module)) fetched.push(request.url());
  });
  return fetched;
}

/** What a split view that could not load says in its place. */
const notLoaded = (region) => region.getByRole('alert').filter({ hasText: 'This part of the page could not be loaded' });

/** Loads the app with the runtime's module held back, which keeps the
 * status line from settling ("Connecting"), and waits until the page has
 * rendered and a frame passed: a fetch made at mount was made by then.
 * Resolves with `settle`, which lets the module load and waits until
 * Connected. */
async function loadUnsettled(browser) {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const RUNTIME = '**/lifeline_runtime_bg.wasm';
  await browser.context.route(RUNTIME, async (route) => {
    await held;
    await route.continue();
  });
  await browser.page.goto(BASE_URL);
  await browser.page.locator('.shell').waitFor();
  await browser.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  return async () => {
    release();
    await waitConnected(browser.page);
    await browser.context.unroute(RUNTIME);
  };
}

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  describe(`app shell at ${viewport.width}×${viewport.height} (${name})`, () => {
    let browser;
    before(async () => {
      browser = await openBrowser(viewport);
      await browser.page.goto(BASE_URL);
    });
    after(async () => browser?.close());

    test('renders the named regions and controls', async () => {
      const { page } = browser;
      await page.getByRole('log', { name: 'Transcript' }).waitFor();
      await page.getByRole('textbox', { name: 'Message' }).waitFor();
      await page.getByRole('button', { name: 'Send' }).waitFor();
      await page.getByRole('button', { name: 'Stop' }).waitFor();
      const sessions = page.getByRole('navigation', { name: 'Sessions' });
      if (name === 'phone') {
        // On a phone the session list opens over the chat.
        assert.equal(await sessions.isVisible(), false);
        await page.getByRole('button', { name: 'Sessions', exact: true }).click();
      }
      await sessions.waitFor();
      assert.ok(await sessions.getByRole('button', { name: 'New session' }).isVisible());
      if (name === 'phone') {
        await page.getByRole('button', { name: 'Close sessions' }).click();
        await sessions.waitFor({ state: 'hidden' });
        await page.getByRole('button', { name: 'Session details' }).click();
      }
      await page.getByRole('combobox', { name: 'Environment' }).waitFor();
    });

    test('the composer stays at the bottom of the viewport', async () => {
      const { page } = browser;
      const box = await page.getByRole('button', { name: 'Send' }).boundingBox();
      assert.ok(box.y + box.height <= viewport.height, 'Send is on screen');
      assert.ok(box.y > viewport.height * 0.6, `Send sits low on the screen (y=${box.y})`);
      const minimum = name === 'phone' ? 44 : 28;
      assert.ok(box.height >= minimum, `target is ${box.height}px, needs ${minimum}px`);
    });

    test('reports connected after a page → controller → runtime round trip', async () => {
      await waitConnected(browser.page);
    });

    test('axe-core finds no accessibility violations', async () => {
      const { violations } = await new AxeBuilder({ page: browser.page }).analyze();
      assert.deepEqual(
        violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(', ')}`),
        [],
      );
    });

    test('no errors in the console', () => {
      assert.deepEqual(browser.errors, []);
    });
  });
}

/** A fresh profile's first visit: `script`, if given, runs in the page
 * before the app's own, and `prepare(browser)` before the page loads;
 * then `check(page)`, and no console errors. */
async function firstVisit(script, check, prepare) {
  const browser = await openBrowser(VIEWPORTS.desktop);
  try {
    if (script) await browser.page.addInitScript(script);
    await prepare?.(browser);
    await browser.page.goto(BASE_URL);
    await check(browser.page);
    assert.deepEqual(browser.errors, []);
  } finally {
    await browser.close();
  }
}

describe('first visit', () => {
  test('the first render waits until the controller has its Start', async () => {
    // Rendered first, the page's mount is one long task during which the
    // controller, ready and waiting, cannot be told to start. The page
    // renders anyway 250 ms after it mounts (FIRST_RENDER_WAIT_MS in
    // web/src/app.rs) if no Start was sent by then, as on a loaded machine:
    // the render must come after the Start or after that wait, never at
    // mount. The mount follows the page's wasm instantiation at once.
    const script = () => {
      const post = Worker.prototype.postMessage;
      Worker.prototype.postMessage = function (message, ...rest) {
        if (typeof message === 'string' && message.startsWith('{"start":')) window.__startAt ??= performance.now();
        return post.call(this, message, ...rest);
      };
      new MutationObserver(() => {
        if (document.querySelector('.shell')) window.__shellAt ??= performance.now();
      }).observe(document, { subtree: true, childList: true });
      for (const name of ['instantiate', 'instantiateStreaming']) {
        const original = WebAssembly[name];
        WebAssembly[name] = async (...args) => {
          const result = await original.apply(WebAssembly, args);
          window.__wasmAt ??= performance.now();
          return result;
        };
      }
    };
    await firstVisit(script, async (page) => {
      await waitConnected(page);
      const { startAt, shellAt, wasmAt } = await page.evaluate(() => ({
        startAt: window.__startAt,
        shellAt: window.__shellAt,
        wasmAt: window.__wasmAt,
      }));
      assert.ok(
        startAt !== undefined && shellAt !== undefined && wasmAt !== undefined,
        `Start at ${startAt}, first render at ${shellAt}, wasm instantiated at ${wasmAt}`,
      );
      assert.ok(
        startAt <= shellAt || shellAt >= wasmAt + 250,
        `the page rendered at ${shellAt} ms, before it sent the Start at ${startAt} ms and ${(shellAt - wasmAt).toFixed(1)} ms after its wasm was instantiated (at ${wasmAt} ms)`,
      );
    });
  });

  test('the Profiles dialog is built when it first opens, not with the page', async () => {
    await firstVisit(null, async (page) => {
      await waitConnected(page);
      assert.equal(await page.locator('form.profile-form').count(), 0, 'the form was built with the page');
      const dialog = page.getByRole('dialog', { name: 'Profiles' });
      for (let opening = 0; opening < 2; opening++) {
        await page.getByRole('button', { name: 'Profiles' }).click();
        await dialog.getByRole('textbox', { name: 'Name' }).waitFor();
        await dialog.getByRole('button', { name: 'Close' }).click();
        await dialog.waitFor({ state: 'hidden' });
      }
      assert.equal(await page.locator('form.profile-form').count(), 1, 'built once');
    });
  });

  test("the Profiles editor's code is fetched when the dialog first opens, once", async () => {
    await firstVisit(null, async (page) => {
      const fetched = fetchesOf(page, 'split_profiles');
      await waitConnected(page);
      assert.deepEqual(fetched, [], 'fetched with the page');
      const dialog = page.getByRole('dialog', { name: 'Profiles' });
      await page.getByRole('button', { name: 'Profiles' }).click();
      await dialog.getByRole('textbox', { name: 'Name' }).waitFor();
      assert.equal(fetched.length, 1, fetched.join(', '));
    });
  });

  test('a Profiles editor that cannot load says so, and Try again loads it', async () => {
    await whileRefused('split_profiles', async (page, allow) => {
      const dialog = page.getByRole('dialog', { name: 'Profiles' });
      await page.getByRole('button', { name: 'Profiles' }).click();
      await notLoaded(dialog).waitFor();
      await allow();
      await dialog.getByRole('button', { name: 'Try again' }).click();
      await dialog.getByRole('textbox', { name: 'Name' }).waitFor();
      assert.equal(await dialog.getByRole('alert').count(), 0, 'the failure stays said after the editor loaded');
    });
  });

  test("a saved profiles' list that cannot load says so in the dialog, whose form still works, and Try again shows it", async () => {
    // The list is a module of its own, fetched by the editor's.
    await whileRefused('split_profile_list', async (page, allow) => {
      const dialog = page.getByRole('dialog', { name: 'Profiles' });
      await page.getByRole('button', { name: 'Profiles' }).click();
      await notLoaded(dialog).waitFor();
      await dialog.getByRole('textbox', { name: 'Name' }).fill('Kept while the list loads');
      assert.equal(await dialog.getByRole('heading', { name: 'Saved profiles' }).count(), 0);
      await allow();
      await dialog.getByRole('button', { name: 'Try again' }).click();
      await dialog.getByRole('heading', { name: 'Saved profiles' }).waitFor();
      assert.equal(await dialog.getByRole('alert').count(), 0, 'the failure stays said after the list loaded');
      assert.equal(
        await dialog.getByRole('textbox', { name: 'Name' }).inputValue(),
        'Kept while the list loads',
        'loading the list does not rebuild the form',
      );
    });
  });

  // Each pane's content is a module of its own (web/src/lazy.rs,
  // `pane_wanted`), fetched once the pane can be seen.
  const PANES = [
    {
      name: 'details pane',
      module: 'split_details',
      pane: (page) => page.getByRole('complementary', { name: 'Session details' }),
      toggle: 'Session details',
      content: (pane) => pane.getByRole('combobox', { name: 'Environment' }),
    },
    {
      name: 'session list',
      module: 'split_sessions',
      pane: (page) => page.getByRole('navigation', { name: 'Sessions' }),
      toggle: 'Sessions',
      content: (pane) => pane.getByRole('link').first(),
    },
  ];

  for (const { name, module, pane, toggle, content } of PANES) {
    test(`the ${name}'s code is fetched on a desktop once connected, and on a phone when the pane first opens`, async () => {
      for (const [vname, viewport] of [['desktop', VIEWPORTS.desktop], ['phone', VIEWPORTS.phone]]) {
        const browser = await openBrowser(viewport);
        try {
          const { page } = browser;
          const fetched = fetchesOf(page, module);
          const settle = await loadUnsettled(browser);
          assert.deepEqual(fetched, [], `${vname}: fetched before the status line settled`);
          assert.equal(await page.getByRole('status').filter({ hasText: /^Connected$/ }).count(), 0);
          await settle();
          const shown = content(pane(page));
          const open = () => page.getByRole('button', { name: toggle, exact: true }).click();
          if (vname === 'phone') {
            assert.deepEqual(fetched, [], 'fetched before the pane was opened');
            assert.equal(await shown.count(), 0, 'built before the pane was opened');
            await open();
          }
          await shown.waitFor();
          assert.equal(fetched.length, 1, `${vname}: ${fetched.join(', ')}`);
          // Closed and opened again, it is not fetched or built again.
          if (vname === 'phone') {
            await page.keyboard.press('Escape');
            await pane(page).waitFor({ state: 'hidden' });
            await open();
            await shown.waitFor();
          }
          assert.equal(fetched.length, 1, `${vname}: ${fetched.join(', ')}`);
          assert.equal(await shown.count(), 1);
          assert.deepEqual(browser.errors, []);
        } finally {
          await browser.close();
        }
      }
    });

    test(`the ${name}'s code is fetched when a phone-wide window widens until the pane is beside the chat`, async () => {
      const browser = await openBrowser(VIEWPORTS.phone);
      try {
        const { page } = browser;
        const fetched = fetchesOf(page, module);
        await page.goto(BASE_URL);
        await waitConnected(page);
        assert.deepEqual(fetched, [], 'fetched while the pane was a closed drawer');
        await page.setViewportSize(VIEWPORTS.desktop);
        await content(pane(page)).waitFor();
        assert.equal(fetched.length, 1, fetched.join(', '));
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test(`a ${name} that cannot load says so in the pane, the rest of the page works, and Try again shows it`, async () => {
      await whileRefused(module, async (page, allow) => {
        const alert = notLoaded(pane(page));
        await alert.waitFor();
        assert.equal(await content(pane(page)).count(), 0);
        await send(page, '$ echo without the pane');
        await commandBlock(page, 'echo without the pane').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        await allow();
        await pane(page).getByRole('button', { name: 'Try again' }).click();
        await content(pane(page)).waitFor();
        await alert.waitFor({ state: 'detached' });
      });
    });
  }

  // The transcript's turn and command blocks are a module of their own
  // (web/src/lazy.rs, `blocks_wanted`): fetched once the status line
  // settles, before anything asks for them, or at once when there is
  // history to show.
  test('the transcript\'s blocks are fetched once the status line settles, and shown at once on a reload with history', async () => {
    for (const [vname, viewport] of [['desktop', VIEWPORTS.desktop], ['phone', VIEWPORTS.phone]]) {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        const fetched = fetchesOf(page, 'split_transcript');
        const settle = await loadUnsettled(browser);
        assert.deepEqual(fetched, [], `${vname}: fetched before the status line settled`);
        const loaded = page.waitForResponse((response) => response.url().includes('split_transcript'));
        await settle();
        await loaded;
        await send(page, '$ echo the first block');
        const block = commandBlock(page, 'echo the first block');
        await block.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        assert.equal(fetched.length, 1, `${vname}: ${fetched.join(', ')}`);
        await page.reload();
        await block.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        // The output is drawn in the frame after its block is mounted.
        const output = block.locator('pre.output').first();
        await output.getByText('the first block').waitFor();
        assert.equal(await output.textContent(), 'the first block\n');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    }
  });

  test('transcript blocks that cannot load are said in the transcript; output that came meanwhile, its last lines too, show after Try again', async () => {
    await whileRefused('split_transcript', async (page, allow) => {
      const log = page.getByRole('log', { name: 'Transcript' });
      const alert = notLoaded(log);
      await alert.waitFor();
      // The turn runs with no block to show it: Stop is enabled while it
      // runs and disabled when it ends (every change recorded, however quick).
      await page.evaluate(() => {
        const stop = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Stop');
        window.__stop = [];
        new MutationObserver(() => window.__stop.push(stop.disabled)).observe(stop, { attributes: true });
      });
      const n = 300000;
      await send(page, `$ seq 1 ${n}`);
      await page.waitForFunction(() => window.__stop.includes(false) && window.__stop.at(-1) === true, null, {
        timeout: 60_000,
      });
      await allow();
      await log.getByRole('button', { name: 'Try again' }).click();
      const block = commandBlock(page, `seq 1 ${n}`);
      await block.getByText('completed', { exact: true }).waitFor();
      await alert.waitFor({ state: 'detached' });
      // The head that was streamed before the block existed, from its
      // first line, and the tail read meanwhile, through the last.
      await block.getByText('Last lines:').waitFor();
      const head = await block.locator('pre.output').first().textContent();
      assert.ok(head.startsWith('1\n2\n3\n'), head.slice(0, 20));
      const tail = (await block.locator('.tail pre').textContent()).trim().split('\n');
      assert.equal(tail.at(-1), String(n));
    });
  });

  test('a controller that cannot load: the page still shows itself and says why', async () => {
    // The first render waits for the controller's Start; one that never
    // comes must not leave the page blank.
    const missing = (browser) =>
      browser.context.route('**/controller.js', (route) => route.fulfill({ status: 404, body: 'gone' }));
    await firstVisit(
      null,
      async (page) => {
        const status = page.getByRole('status').filter({ hasText: /^Not connected: / });
        await status.waitFor();
        assert.match(await status.textContent(), /controller worker stopped/);
        await page.getByRole('textbox', { name: 'Message' }).waitFor();
      },
      missing,
    );
  });

  test('the service worker registers once the status line has settled, not while the app loads', async () => {
    // Its install downloads the whole bundle again; begun at mount, it
    // competed with the first visit's own loads on the way to Connected.
    const script = () => {
      const register = ServiceWorkerContainer.prototype.register;
      ServiceWorkerContainer.prototype.register = function (...args) {
        window.__statusAtRegister = [...document.querySelectorAll('[role=status]')].map((s) => s.textContent);
        return register.apply(this, args);
      };
    };
    await firstVisit(script, async (page) => {
      await waitServiceWorkerReady(page);
      const status = await page.evaluate(() => window.__statusAtRegister);
      assert.ok(status?.includes('Connected'), `the status line said ${JSON.stringify(status)} when it registered`);
    });
  });
});

describe('installable PWA', () => {
  let browser;
  before(async () => {
    browser = await openBrowser(VIEWPORTS.desktop);
  });
  after(async () => browser?.close());

  test('Chromium reports no installability errors', async () => {
    const { page, context } = browser;
    await page.goto(BASE_URL);
    await waitServiceWorkerReady(page);
    const cdp = await context.newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    assert.deepEqual(installabilityErrors, []);
    const manifest = await cdp.send('Page.getAppManifest');
    assert.deepEqual(manifest.errors, []);
  });

  test('starts offline after the first visit', async () => {
    const { page, context } = browser;
    await page.goto(BASE_URL);
    await waitServiceWorkerReady(page);
    await context.setOffline(true);
    try {
      await page.reload();
      assert.ok(await page.evaluate(() => navigator.serviceWorker.controller !== null));
      await page.getByRole('log', { name: 'Transcript' }).waitFor();
      await waitConnected(page);
      // The Profiles editor's module was never fetched by the page: the
      // service worker precached it.
      await page.getByRole('button', { name: 'Profiles' }).click();
      await page.getByRole('dialog', { name: 'Profiles' }).getByRole('textbox', { name: 'Name' }).waitFor();
    } finally {
      await context.setOffline(false);
    }
  });
});
