(maxElements) => {
  // The page as a model acting on it needs it: the visible elements a user can act on or read
  // (links, buttons, fields, headings, labels, elements with a role, and short texts), one line
  // each, numbered. The number is stamped on the element (`data-vaider-ref`) so that an action
  // naming it reaches this very element; the previous numbers are removed first, so a ref is
  // only ever the one of the latest snapshot.
  const REF = 'data-vaider-ref';
  for (const old of document.querySelectorAll(`[${REF}]`)) old.removeAttribute(REF);
  const norm = (t) => String(t || '').replace(/\s+/g, ' ').trim();
  const cut = (t, n) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0;
  };
  const onScreen = (el) => {
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  };
  const implicitRole = (el) => {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (tag === 'button' || (tag === 'input' && ['button', 'submit', 'reset', 'image'].includes(type))) return 'button';
    if (tag === 'a' && el.hasAttribute('href')) return 'link';
    if (tag === 'input' && type === 'checkbox') return 'checkbox';
    if (tag === 'input' && type === 'radio') return 'radio';
    if (tag === 'input' && type === 'range') return 'slider';
    if (tag === 'input' && type === 'number') return 'spinbutton';
    if (tag === 'input' && type === 'search') return 'searchbox';
    if (tag === 'textarea' || tag === 'input') return 'textbox';
    if (tag === 'select') return 'combobox';
    if (/^h[1-6]$/.test(tag)) return 'heading';
    if (tag === 'label') return 'label';
    if (tag === 'summary') return 'button';
    if (tag === 'img' && el.getAttribute('alt')) return 'img';
    return null;
  };
  const ownText = (el) => norm([...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(' '));
  const accessibleName = (el) => {
    const label = el.getAttribute('aria-label');
    if (label) return norm(label);
    const by = el.getAttribute('aria-labelledby');
    if (by) return norm(by.split(/\s+/).map((id) => (document.getElementById(id) || {}).innerText || '').join(' '));
    if (el.labels && el.labels.length) return norm([...el.labels].map((l) => l.innerText).join(' '));
    if (el.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes(el.type)) return norm(el.value);
    if (el.tagName === 'IMG') return norm(el.alt);
    if (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)) return norm(el.getAttribute('placeholder') || el.getAttribute('title'));
    return norm(el.innerText) || norm(el.getAttribute('title'));
  };
  // A field's value as the model may see it: a password's never leaves the page.
  const value = (el) => {
    if (el.tagName === 'SELECT') return norm(el.selectedOptions[0] ? el.selectedOptions[0].text : '');
    if (el.type === 'password') return el.value ? `(${el.value.length} characters, hidden)` : '';
    return cut(String(el.value), 60);
  };
  const describe = (el, role, holds) => {
    const name = holds ? norm(el.getAttribute('aria-label')) || ownText(el) : accessibleName(el);
    let line = `${role} "${cut(name, 80).replace(/"/g, "'")}"`;
    // A password field says so, for whoever logs what is typed into it.
    if (el.type === 'password') line += ' secret';
    if (['textbox', 'searchbox', 'spinbutton', 'combobox', 'slider'].includes(role) && 'value' in el) line += ` value="${value(el).replace(/"/g, "'")}"`;
    if (['checkbox', 'radio'].includes(role) || el.getAttribute('aria-checked')) line += el.checked || el.getAttribute('aria-checked') === 'true' ? ' checked' : ' unchecked';
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') line += ' disabled';
    if (!onScreen(el)) line += ' (off-screen: scroll to see it)';
    return line;
  };
  const INTERACTIVE = 'a[href], button, input, select, textarea, summary, label, [role], [contenteditable="true"], h1, h2, h3, h4, h5, h6';
  const lines = [];
  let more = 0;
  // Inside a listed control its parts (a button's icon, a link's span) are the control.
  const listed = new Set();
  for (const el of document.body ? document.body.querySelectorAll('*') : []) {
    if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'OPTION'].includes(el.tagName)) continue;
    if (el.closest('[aria-hidden="true"]')) continue;
    let inside = false;
    for (let p = el.parentElement; p; p = p.parentElement) if (listed.has(p)) { inside = true; break; }
    if (inside) continue;
    if (el.tagName === 'INPUT' && el.type === 'hidden') continue;
    let role = el.getAttribute('role') || implicitRole(el);
    if (!role && ownText(el)) role = 'text';
    if (!role || ['presentation', 'none', 'generic'].includes(role)) continue;
    if (!visible(el)) continue;
    // An element holding other things to list (a label around its field, a text around a
    // link) is listed by its own text, and its contents each on their own line.
    const holds = el.querySelector(INTERACTIVE) !== null;
    if (role === 'text' && (holds ? !ownText(el) : !accessibleName(el))) continue;
    if (!holds) listed.add(el);
    if (lines.length >= maxElements) { more += 1; continue; }
    el.setAttribute(REF, String(lines.length + 1));
    lines.push(`[${lines.length + 1}] ${describe(el, role, holds)}`);
  }
  return { lines, more };
}
