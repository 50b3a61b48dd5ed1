// Service worker: precaches exactly one build and serves it offline.
//
// The build tool replaces the two placeholders below. The cache name carries
// the build's content hash, so a new build installs into a new cache and the
// old one is deleted only once the new worker activates; a running page never
// mixes assets from two builds. No skipWaiting(): a new build takes over when
// every tab of the old one has closed, because a controller restarted by an
// old page must load the old worker code. On the very first install the
// worker claims the open page, so that page's later loads (a restarted
// worker, say) come from the same cache as everything else.
const VERSION = '__LIFELINE_BUILD__';
const CACHE = `lifeline-${VERSION}`;
const ASSETS = __LIFELINE_ASSETS__;
// Each asset's SHA-256, as Subresource Integrity writes it.
const INTEGRITY = __LIFELINE_INTEGRITY__;
// llama.cpp in WebAssembly for local models: about 3 MB gzip, so it is not
// precached (most visitors never use a local model). `local-model.js` puts
// it into this cache when a model file is picked and before a model loads
// (so an offline start with a local profile works); its name carries
// the engine files' own hash, so it outlives app builds that leave the
// engine unchanged and is dropped when the engine changes.
const ENGINE = '__LIFELINE_ENGINE__';

// Each asset is revalidated, not fetched again: on a first visit the page
// and its workers have just downloaded most of them (every module), and a
// second download of all of them, about as much again as the visit
// itself, went on beside the visitor's first command. Whatever comes,
// from the server or from the HTTP cache, must have the digest this build
// recorded: a copy a validator kept wrongly (a file changed within the
// second its date names) is fetched again whole, and one that still does
// not match belongs to another build, so the install fails and is tried
// again at the next visit rather than cache a mix of two builds.
async function fetchAsset(url) {
  const integrity = INTEGRITY[url];
  try {
    return await fetch(new Request(url, { cache: 'no-cache', integrity }));
  } catch {
    return fetch(new Request(url, { cache: 'reload', integrity }));
  }
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const responses = await Promise.all(
        ASSETS.map(async (url) => {
          const response = await fetchAsset(url);
          if (!response.ok) throw new TypeError(`${url}: HTTP ${response.status}`);
          return [url, response];
        }),
      );
      const cache = await caches.open(CACHE);
      await Promise.all(responses.map(([url, response]) => cache.put(url, response)));
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(
          names
            .filter((name) => name.startsWith('lifeline-') && name !== CACHE && name !== ENGINE)
            .map((name) => caches.delete(name)),
        ),
      )
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) {
    return;
  }
  event.respondWith(
    caches.open(CACHE).then(async (cache) => {
      const key = request.mode === 'navigate' ? './' : request;
      const cached = (await cache.match(key)) || (await caches.match(request, { cacheName: ENGINE }));
      return cached || fetch(request);
    }),
  );
});
