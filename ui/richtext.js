// The model's text as safe DOM for the detail view: paragraphs, lists, **bold**, `code`, and
// timestamps ("00:03", "3.5s", "at 3 seconds") as links that seek the video; details as tables.

import { h } from './dom.js';

// mm:ss, m:ss, hh:mm:ss (optionally with fractions), 3s, 3.5s, "at 3 seconds".
const INLINE = /\*\*([^*\n]+?)\*\*|`([^`\n]+)`|\b(?:(\d{1,2}):)?(\d{1,3}):([0-5]\d)(?:\.(\d{1,3}))?(?![\d:])|\b(\d+(?:\.\d+)?)s\b|\b(at (\d+(?:\.\d+)?) ?(?:seconds?|secs?|s)\b)/gi;

function timestampSeconds(m) {
  if (m[4] !== undefined) {
    const hours = m[3] !== undefined ? Number(m[3]) : 0;
    const frac = m[6] !== undefined ? Number(`0.${m[6]}`) : 0;
    return hours * 3600 + Number(m[4]) * 60 + Number(m[5]) + frac;
  }
  if (m[7] !== undefined) return Number(m[7]);
  if (m[9] !== undefined) return Number(m[9]);
  return null;
}

export function inline(text, ctx, noBold = false) {
  const frag = document.createDocumentFragment();
  let last = 0;
  INLINE.lastIndex = 0;
  const matches = [...String(text).matchAll(INLINE)];
  for (const m of matches) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    if (m[1] !== undefined) {
      frag.append(noBold ? m[0] : h('strong', null, inline(m[1], ctx, true)));
    } else if (m[2] !== undefined) {
      frag.append(h('code', null, m[2]));
    } else {
      const t = timestampSeconds(m);
      if (t === null || !ctx || !ctx.seekable) frag.append(h('span', { class: 'ts-plain' }, m[0]));
      else {
        const secs = String(Math.round(t * 1000) / 1000);
        frag.append(h('a', {
          class: 'ts', href: ctx.hrefFor(secs), dataset: { t: secs },
          title: `Play the video from ${m[0].replace(/^at /i, '')}`,
        }, m[0]));
      }
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

/** Markdown-ish text to DOM: paragraphs with line breaks, lists, headings, **bold**, `code`. */
export function richText(text, ctx) {
  const out = document.createDocumentFragment();
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
  let para = null;
  let list = null;
  const close = () => { para = null; list = null; };
  for (const raw of lines) {
    const line = raw.replace(/\s+$/, '');
    if (!line.trim()) { close(); continue; }
    let m = line.match(/^\s*(#{1,6})\s+(.*)$/);
    if (m) {
      close();
      out.append(h('h4', { class: 'md-heading' }, inline(m[2], ctx)));
      continue;
    }
    m = line.match(/^\s*(?:[-*•]|(\d+)[.)])\s+(.*)$/);
    if (m) {
      const ordered = m[1] !== undefined;
      const tag = ordered ? 'ol' : 'ul';
      if (!list || list.tagName.toLowerCase() !== tag) {
        para = null;
        list = h(tag, ordered && m[1] !== '1' ? { start: m[1] } : null);
        out.append(list);
      }
      list.append(h('li', null, inline(m[2], ctx)));
      continue;
    }
    if (list && /^\s{2,}\S/.test(raw) && list.lastElementChild) {
      list.lastElementChild.append(h('br'), inline(line.trim(), ctx));
      continue;
    }
    list = null;
    if (!para) {
      para = h('p');
      out.append(para);
    } else para.append(h('br'));
    para.append(inline(line, ctx));
  }
  return out;
}

export function prettyJson(value) {
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

export function humanize(key) {
  const s = String(key).replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// `details` is the model's own free-form answer (any JSON the task's schema allowed, or not),
// so this renderer looks at each value's type to show it: the one place the page inspects a
// value's shape, and only for model output, never for the server's own fields.
export function detailsBlock(details, ctx) {
  const wrap = h('div', { class: 'details-structured' });
  if (details === null || typeof details !== 'object' || Array.isArray(details)) {
    wrap.append(h('pre', { class: 'json' }, prettyJson(details)));
    return wrap;
  }
  for (const [key, value] of Object.entries(details)) {
    const title = h('h4', null, humanize(key));
    if (typeof value === 'string') {
      wrap.append(title, h('div', { class: 'prose' }, richText(value, ctx)));
    } else if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
      wrap.append(title, value.length
        ? h('ul', null, value.map((v) => h('li', null, inline(String(v), ctx))))
        : h('p', { class: 'muted' }, 'None.'));
    } else if (Array.isArray(value) && value.length && value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
      const cols = [...new Set(value.flatMap((v) => Object.keys(v)))];
      wrap.append(title, h('div', { class: 'table-wrap' }, h('table', { class: `data-table table-${key}` },
        h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, humanize(c))))),
        h('tbody', null, value.map((row) => h('tr', null, cols.map((c) => {
          const v = row[c];
          if (c === 'severity' && typeof v === 'string') {
            return h('td', null, h('span', { class: `badge severity-${v.toLowerCase()}` }, v));
          }
          if (v === null || v === undefined) return h('td', { class: 'muted' }, '—');
          return h('td', null, typeof v === 'object' ? h('code', null, JSON.stringify(v)) : inline(String(v), ctx));
        })))))));
    } else if (value === null || value === undefined) {
      continue;
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      wrap.append(title, h('p', null, String(value)));
    } else {
      wrap.append(title, h('pre', { class: 'json' }, prettyJson(value)));
    }
  }
  return wrap;
}
