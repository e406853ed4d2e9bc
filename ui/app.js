// Vaider's web UI: history, detail and settings over the JSON API of docs/ui-api.md.
// Plain ES modules, no build step, no dependency. Every text from the server goes into the
// page as text nodes (never as HTML), so nothing an analysis contains can run here.
// This entry module starts the page: it takes the token, trades it for the session cookie,
// shows the first view and connects the live events. The modules import each other only
// for functions called later, so their import cycles (api, server, shell, router) are safe.

import { app } from './state.js';
import { TOKEN_KEY, signOut, startSession, takeTokenFromUrl } from './api.js';
import { connectEvents, refreshSettings, setOnline } from './server.js';
import { renderBanners, renderServerState } from './shell.js';
import { route } from './router.js';

async function main() {
  try { app.token = sessionStorage.getItem(TOKEN_KEY); } catch { app.token = null; }
  takeTokenFromUrl();
  const signOutButton = document.getElementById('sign-out');
  if (signOutButton) signOutButton.addEventListener('click', () => { signOut(); });
  window.addEventListener('hashchange', () => {
    if (/(^#|[?&])token=/.test(location.hash)) takeTokenFromUrl();
    route();
  });
  // The view's first request carries the bearer header, so it need not wait for the cookie;
  // what cannot send a header (<video>, EventSource) waits for app.sessionReady.
  app.sessionReady = startSession();
  route();
  try {
    await app.sessionReady;
  } catch (e) {
    if (e.status === 401) return; // showUnauthorized() has said what to do
    renderServerState();
    renderBanners();
    // Keep trying in the background; the page comes back by itself.
    const timer = setInterval(async () => {
      try {
        app.sessionReady = startSession();
        await app.sessionReady;
        clearInterval(timer);
        setOnline(true);
        await refreshSettings();
        connectEvents();
        route();
      } catch { /* still down */ }
    }, 3000);
    return;
  }
  connectEvents();
  await refreshSettings();
}

main();
