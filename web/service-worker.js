// The web app's service worker (built into dist/web/sw.js by web/vite.config.mjs, which fills in
// SHELL and VERSION): it keeps the app's own files so the app installs and opens without a
// connection, where it says it is offline. It never stores an answer of the API: those requests are
// not touched at all.
const VERSION = '__VERSION__';
const SHELL = __SHELL__;
const CACHE = `atrium-shell-${VERSION}`;
/** Paths that are the server's, not the app's: never answered from the cache. */
const SERVER_PATHS = /^\/(?:api|v1|docs|share)(?:\/|$)|^\/(?:openapi\.json|healthz|readyz|metrics|sw\.js)$/;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('atrium-shell-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || SERVER_PATHS.test(url.pathname)) return;
  if (request.mode === 'navigate') {
    // The network first (a new version of the app is seen at once); the kept shell when offline.
    event.respondWith(fetch(request).catch(() => caches.match('/', { cacheName: CACHE }).then((hit) => hit ?? Response.error())));
    return;
  }
  // The build's files have content-hashed names: a kept copy is always right.
  event.respondWith(caches.match(request, { cacheName: CACHE }).then((hit) => hit ?? fetch(request)));
});
