// The small web apps the eval set is made from: one HTML page per item, built from the app's
// words (shop, dashboard, settings), the item's random choices (seeded) and at most one
// injected defect. The page reports when and where its defect shows (window.__defect), so the
// labels say the time range and the region without anyone drawing them by hand.

export const APPS = {
  shop: {
    title: 'Corner Shop', heading: 'Your cart', button: 'Place order', message: 'Order placed',
    wrongMessage: 'Order plased', next: 'Receipt', wrongNext: 'Returns', badge: 'Paid',
    label: 'Blue ceramic mug', longLabel: 'Blue ceramic mug with hand-painted gold rim, set of six, gift wrapped',
    second: 'Keep shopping', extra: 'Cancel order', renamed: 'Corner Store',
  },
  dashboard: {
    title: 'Team Board', heading: 'Weekly report', button: 'Refresh', message: 'Report updated',
    wrongMessage: 'Report not found', next: 'Overview', wrongNext: 'Billing', badge: 'Live',
    label: 'Open tickets: 12', longLabel: 'Open tickets waiting for a first answer from the support team: 12',
    second: 'Export', extra: 'Delete report', renamed: 'Team Boards',
  },
  settings: {
    title: 'Account', heading: 'Profile settings', button: 'Save', message: 'Changes saved',
    wrongMessage: 'Changes saved for Bob', next: 'Profile', wrongNext: 'Security', badge: 'Saved',
    label: 'Display name: Ada', longLabel: 'Display name: Ada Augusta King, Countess of Lovelace, Analyst',
    second: 'Reset', extra: 'Delete account', renamed: 'My Account',
  },
};

export const STYLE = `
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.3 sans-serif; background: #f4f5f7; color: #1d2330; }
header { background: HEADER; color: #fff; padding: 10px 16px; font-weight: bold; font-size: 18px; }
nav { padding: 6px 16px; background: #dde3ea; font-size: 14px; }
nav a { margin-right: 14px; color: #234; }
main { padding: 12px 16px; position: relative; }
.card { background: #fff; border: 1px solid #c8ced6; border-radius: 6px; padding: 12px; width: 300px; }
.label { width: 260px; height: 22px; white-space: nowrap; border: 1px dashed #b0b8c2; padding: 1px 4px; }
.label.clip { overflow: hidden; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; background: #999; color: #fff; font-size: 14px; margin-top: 8px; }
.badge.ok { background: #1c8c3c; } .badge.bad { background: #c62828; }
.row { margin-top: 10px; } button { font-size: 15px; padding: 6px 12px; margin-right: 6px; }
button.primary { background: #2457c5; color: #fff; border: 0; border-radius: 4px; }
.spinner { display: inline-block; width: 22px; height: 22px; border: 4px solid #ccd; border-top-color: #2457c5;
  border-radius: 50%; animation: spin 0.8s linear infinite; vertical-align: middle; }
@keyframes spin { to { transform: rotate(360deg); } }
.msg { margin-top: 10px; color: #1c6b30; font-weight: bold; min-height: 20px; }
.toast { position: absolute; right: 16px; top: 12px; background: #c62828; color: #fff; padding: 10px 14px; border-radius: 4px; }
.panel { position: absolute; left: 150px; top: 70px; width: 260px; height: 90px; background: #ffe9a8; border: 1px solid #c9a300; padding: 8px; }
.banner { background: #2457c5; color: #fff; padding: 14px 16px; }
`;

export function esc(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

/// The page of one item. `state` is 'before' or 'after' for a screenshot pair (static), or
/// 'recording' for a page that runs its timeline when the primary button is clicked.
export function page(appName, defect, state, rand) {
  const app = APPS[appName];
  const header = ['#2d3e50', '#30475e', '#263445'][Math.floor(rand() * 3)];
  const after = state === 'after';
  const show = (cls) => defect === cls && after;
  const title = show('unmentioned-change') ? app.renamed : app.title;
  const label = show('text-overflow') ? app.longLabel : app.label;
  const buttonText = after ? `${app.button} again` : app.button;
  // A missing element or an extra one, half each.
  const extraVariant = show('missing-extra-element') && rand() < 0.5;
  const secondary = show('missing-extra-element') && !extraVariant ? '' : `<button id="second">${esc(app.second)}</button>`;
  const extra = extraVariant ? `<button id="extra">${esc(app.extra)}</button>` : '';
  const badgeClass = after ? (show('wrong-colour-state') ? 'badge bad' : 'badge ok') : 'badge';
  const panel = show('overlap') ? `<div class="panel" id="defect">Tip: you can ${esc(app.button.toLowerCase())} later.</div>` : '';
  const banner = show('layout-shift') ? `<div class="banner" id="banner">New: faster ${esc(app.heading.toLowerCase())}</div>` : '';
  const heading = show('wrong-page') ? app.wrongNext : app.heading;
  const message = after ? (show('wrong-text') ? app.wrongMessage : app.message) : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>${STYLE.replace('HEADER', header)}</style></head><body>
<header id="title">${esc(title)}</header>
<nav><a href="#">Home</a><a href="#">${esc(app.next)}</a><a href="#">Help</a></nav>
${banner}
<main id="main"><div class="card" id="card">
<h2 id="heading" style="margin:0 0 8px">${esc(heading)}</h2>
<div class="label${appName === 'dashboard' ? '' : ' clip'}" id="label">${esc(label)}</div>
<div><span class="${badgeClass}" id="badge">${esc(app.badge)}</span></div>
<div class="row" id="buttons"><button class="primary" id="primary">${esc(buttonText)}</button>${secondary}${extra}</div>
<div class="msg" id="msg">${esc(message)}</div>
</div>${panel}</main>
<script>window.__app = ${JSON.stringify({ app, defect })};</script>
${state === 'recording' ? `<script>${TIMELINE}</script>` : ''}
</body></html>`;
}

// The recording's timeline, run in the page: a click shows a spinner, then the message, the
// green badge, and the next page. The defect (window.__app.defect) bends one step, and its
// start, end and element are written to window.__defect for the labels.
const TIMELINE = `
(() => {
  const { app, defect } = window.__app;
  const $ = (id) => document.getElementById(id);
  const mark = (el) => { const r = el.getBoundingClientRect();
    window.__defect = { start: Date.now(), end: null,
      box: { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) } }; };
  const finish = () => { if (window.__defect) window.__defect.end = Date.now(); };
  if (defect === 'layout-shift') setTimeout(() => {
    const b = document.createElement('div'); b.className = 'banner'; b.id = 'banner';
    b.textContent = 'New: faster ' + app.heading.toLowerCase();
    document.querySelector('nav').after(b); mark($('main')); }, 450);
  $('primary').addEventListener('click', () => {
    const spin = document.createElement('span'); spin.className = 'spinner'; spin.id = 'spinner';
    $('msg').textContent = ''; $('msg').appendChild(spin);
    if (defect === 'endless-spinner') { mark(spin); return; }
    if (defect === 'flash-error-toast') setTimeout(() => {
      const t = document.createElement('div'); t.className = 'toast'; t.textContent = 'Error: request failed';
      $('main').appendChild(t); mark(t); setTimeout(() => { t.remove(); finish(); }, 450); }, 250);
    setTimeout(() => {
      $('msg').textContent = defect === 'wrong-text' ? app.wrongMessage : app.message;
      if (defect === 'wrong-text') mark($('msg'));
      $('badge').className = defect === 'wrong-colour-state' ? 'badge bad' : 'badge ok';
      if (defect === 'wrong-colour-state') mark($('badge'));
      if (defect === 'text-overflow') { $('label').textContent = app.longLabel; mark($('label')); }
      if (defect === 'missing-extra-element') { $('second').remove(); mark($('buttons')); }
      if (defect === 'unmentioned-change') { $('title').textContent = app.renamed; mark($('title')); }
      if (defect === 'overlap') { const p = document.createElement('div'); p.className = 'panel';
        p.textContent = 'Tip: you can ' + app.button.toLowerCase() + ' later.'; $('main').appendChild(p); mark(p); }
    }, 800);
    setTimeout(() => {
      $('heading').textContent = defect === 'wrong-page' ? app.wrongNext : app.next;
      document.title = $('heading').textContent;
      if (defect === 'wrong-page') mark($('heading'));
    }, 1500);
  });
})();
`;
