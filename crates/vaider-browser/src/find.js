(selector) => {
  // The selectors of a test plan: CSS (optionally `css=`), `text=Sign in` (an element whose own
  // text is that, ignoring case and spaces at the ends; `text="Sign in"` exactly) and
  // `role=button[name="Sign in"]` (ARIA role, explicit or implied by the tag, and accessible
  // name). The first visible match wins, else the first match. It is marked so CDP can reach it.
  const MARK = 'data-vaider-found';
  for (const old of document.querySelectorAll(`[${MARK}]`)) old.removeAttribute(MARK);
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    // Playwright's rule: a box and not visibility:hidden. An opacity:0 control (a custom
    // checkbox drawn by its label) is visible and takes clicks.
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const norm = (t) => String(t || '').replace(/\s+/g, ' ').trim();
  const implicitRole = (el) => {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (tag === 'button' || (tag === 'input' && ['button', 'submit', 'reset'].includes(type))) return 'button';
    if (tag === 'a' && el.hasAttribute('href')) return 'link';
    if (tag === 'input' && type === 'checkbox') return 'checkbox';
    if (tag === 'input' && type === 'radio') return 'radio';
    if (tag === 'textarea' || (tag === 'input' && ['text', 'email', 'password', 'search', 'tel', 'url', 'number'].includes(type))) return 'textbox';
    if (/^h[1-6]$/.test(tag)) return 'heading';
    if (tag === 'li') return 'listitem';
    if (tag === 'ul' || tag === 'ol') return 'list';
    if (tag === 'img') return 'img';
    if (tag === 'select') return 'combobox';
    if (tag === 'form') return 'form';
    return null;
  };
  const accessibleName = (el) => {
    const label = el.getAttribute('aria-label');
    if (label) return norm(label);
    const by = el.getAttribute('aria-labelledby');
    if (by) return norm(by.split(/\s+/).map((id) => (document.getElementById(id) || {}).innerText || '').join(' '));
    if (el.labels && el.labels.length) return norm([...el.labels].map((l) => l.innerText).join(' '));
    if (el.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes(el.type)) return norm(el.value);
    if (el.tagName === 'IMG') return norm(el.alt);
    const text = norm(el.innerText);
    return text || norm(el.getAttribute('placeholder') || el.getAttribute('title'));
  };
  let matches = [];
  try {
    if (selector.startsWith('text=')) {
      let want = selector.slice(5).trim();
      const exact = /^".*"$/.test(want);
      if (exact) want = want.slice(1, -1);
      const same = (t) => (exact ? norm(t) === want : norm(t).toLowerCase() === norm(want).toLowerCase());
      // The innermost elements whose text is the wanted text.
      matches = [...document.body.querySelectorAll('*')].filter((el) => same(el.innerText || el.value)
        && ![...el.children].some((c) => same(c.innerText || c.value)));
    } else if (selector.startsWith('role=')) {
      const m = /^role=([a-z]+)\s*(?:\[\s*name\s*=\s*"(.*)"\s*\])?$/i.exec(selector.trim());
      if (!m) return { found: false, visible: false, bad: true };
      const [, role, name] = m;
      matches = [...document.body.querySelectorAll('*')].filter((el) => (el.getAttribute('role') || implicitRole(el)) === role.toLowerCase()
        && (name === undefined || accessibleName(el) === norm(name)));
    } else {
      matches = [...document.querySelectorAll(selector.startsWith('css=') ? selector.slice(4) : selector)];
    }
  } catch (e) {
    return { found: false, visible: false, bad: true };
  }
  if (!matches.length) return { found: false, visible: false };
  const el = matches.find(visible) || matches[0];
  el.setAttribute(MARK, '');
  return { found: true, visible: visible(el) };
}
