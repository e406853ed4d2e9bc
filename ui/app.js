// Vaider's web UI: history, detail and settings over the JSON API of docs/ui-api.md.
// Plain ES modules, no build step, no dependency. Every text from the server goes into the
// page as text nodes (never as HTML), so nothing an analysis contains can run here.
// This entry module starts the page: it trades the link's one-time login code for the tab's
// session, shows the first view and connects the live events. The modules import each other
// only for functions called later, so their import cycles (api, server, shell, router) are safe.

import { app } from './state.js';
import { SESSION_KEY, signIn, signOut, takeCodeFromUrl } from './api.js';
import { connectEvents, refreshSettings } from './server.js';
import { renderBanners, renderServerState, showUnauthorized } from './shell.js';
import { route } from './router.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Signs in with `code`, waiting out a server that does not answer yet; false if refused. */
async function signInWithCode(code) {
  for (;;) {
    try {
      await signIn(code);
      return true;
    } catch (e) {
      // Refused (used, expired, guessed): showUnauthorized() has said what to do.
      if (e.status !== 0) return false;
      renderServerState();
      renderBanners();
      await sleep(3000);
    }
  }
}

async function main() {
  try { app.session = sessionStorage.getItem(SESSION_KEY); } catch { app.session = null; }
  const code = takeCodeFromUrl();
  const signOutButton = document.getElementById('sign-out');
  if (signOutButton) signOutButton.addEventListener('click', () => { signOut(); });
  window.addEventListener('hashchange', () => {
    // A new link opened in this tab (a signed-out page opened again): sign in with its code,
    // then show its route.
    const next = takeCodeFromUrl();
    if (next) {
      signInWithCode(next).then((ok) => { if (ok) start(); });
      return;
    }
    route();
  });
  if (code && !(await signInWithCode(code))) return;
  if (!app.session) {
    showUnauthorized();
    return;
  }
  await start();
}

/** Shows the page for a signed-in tab: its view, the live events and the settings. */
async function start() {
  app.unauthorized = false;
  document.body.classList.remove('signed-out');
  renderServerState();
  renderBanners();
  route();
  connectEvents();
  await refreshSettings();
}

main();
