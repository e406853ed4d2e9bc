// What every Vaider chat view shares: its side of MCP Apps (JSON-RPC over postMessage with
// the host, as the spec describes, so no SDK is bundled into the page), the view's data
// under the result's `_meta`, media loaded from Vaider's loopback origin or else fetched as
// data through the view's own tool, and text with its times turned into buttons. Nothing
// here holds or sends Vaider's token: the host makes every call.
const Vaider = (() => {
  let nextId = 1;
  const pending = new Map();
  const handlers = {};

  function post(message) { window.parent.postMessage(message, '*'); }

  function request(method, params) {
    const id = nextId++;
    post({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.method) {
      // A request from the host (teardown, ping) is answered at once; the view keeps nothing.
      if (m.id !== undefined) post({ jsonrpc: '2.0', id: m.id, result: {} });
      const handler = handlers[m.method];
      if (handler) handler(m.params || {});
      return;
    }
    const waiting = pending.get(m.id);
    if (!waiting) return;
    pending.delete(m.id);
    if (m.error) waiting.reject(new Error(m.error.message || 'the host refused'));
    else waiting.resolve(m.result);
  });

  function applyContext(context) {
    if (!context) return;
    if (context.theme) document.documentElement.style.colorScheme = context.theme;
    const vars = context.styles && context.styles.variables;
    if (vars) {
      for (const [name, value] of Object.entries(vars)) {
        if (value) document.documentElement.style.setProperty(name, value);
      }
    }
  }

  function reportSize() {
    let last = '';
    const send = () => {
      const width = Math.ceil(document.documentElement.scrollWidth);
      const height = Math.ceil(document.documentElement.scrollHeight);
      const key = `${width}x${height}`;
      if (key === last) return;
      last = key;
      post({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { width, height } });
    };
    new ResizeObserver(send).observe(document.body);
    send();
  }

  /** Starts the view: `show(result)` is called with each tool result the host sends. */
  async function start(name, show) {
    handlers['ui/notifications/tool-result'] = (result) => {
      try { show(result, viewData(result)); } catch (e) { fail(e.message); }
    };
    handlers['ui/notifications/host-context-changed'] = applyContext;
    const init = await request('ui/initialize', {
      appInfo: { name: `vaider-${name}`, version: '1' },
      appCapabilities: { availableDisplayModes: ['inline'] },
      protocolVersion: '2026-01-26',
    });
    applyContext(init && init.hostContext);
    post({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });
    reportSize();
  }

  /** The view's own data in a result (media paths, grants), or an empty one. */
  function viewData(result) {
    const meta = (result && result._meta && result._meta['vaider/view']) || {};
    return { origin: meta.origin || null, media: meta.media || {}, ...meta };
  }

  function callTool(name, args) { return request('tools/call', { name, arguments: args }); }

  /** A tool result's error sentence, if it failed. */
  function errorOf(result) {
    if (!result || !result.isError) return null;
    const s = result.structuredContent;
    if (s && s.error) return s.error;
    const text = (result.content || []).find((c) => c.type === 'text');
    return text ? text.text : 'the call failed';
  }

  /** Loads `path` (a signed path) into the <video> or <img> `el`: from Vaider's origin when
   * this page can reach it, else as data through the view's media tool. Resolves to how it
   * came ('url', 'data') or 'refused', and marks `el.dataset.source` so. */
  async function loadMedia(el, path, data) {
    if (!path) { el.dataset.source = 'none'; return 'none'; }
    if (data.origin && await tryUrl(el, data.origin + path)) {
      el.dataset.source = 'url';
      return 'url';
    }
    let result;
    try { result = await callTool('vaider_view_media', { path }); } catch (e) { result = { isError: true, content: [{ type: 'text', text: e.message }] }; }
    const error = errorOf(result);
    if (error) {
      el.dataset.source = 'refused';
      el.removeAttribute('src');
      const note = document.createElement('p');
      note.className = 'error media-error';
      note.textContent = error;
      el.after(note);
      return 'refused';
    }
    const s = result.structuredContent;
    el.src = `data:${s.mimeType};base64,${s.data}`;
    el.dataset.source = 'data';
    return 'data';
  }

  /** Whether `url` loads into `el` within a few seconds. */
  function tryUrl(el, url) {
    return new Promise((resolve) => {
      const loaded = el.tagName === 'VIDEO' ? 'loadedmetadata' : 'load';
      const done = (ok) => () => {
        clearTimeout(timer);
        el.removeEventListener(loaded, yes);
        el.removeEventListener('error', no);
        resolve(ok);
      };
      const yes = done(true);
      const no = done(false);
      const timer = setTimeout(no, 6000);
      el.addEventListener(loaded, yes);
      el.addEventListener('error', no);
      el.src = url;
    });
  }

  /** Says where the media came from, once all of them settled. */
  function noteMedia(ways, origin) {
    const note = document.getElementById('media-note');
    const used = new Set(ways.filter((w) => w !== 'none'));
    let mode = 'none';
    if (used.has('refused')) mode = 'refused';
    else if (used.has('data')) mode = 'data';
    else if (used.has('url')) mode = 'url';
    document.body.dataset.media = mode;
    if (!note) return;
    note.textContent = {
      url: `Media from Vaider at ${origin ? origin.replace(/^http:\/\//, '') : 'loopback'}.`,
      data: origin
        ? 'Media sent as data: this page cannot reach Vaider on loopback.'
        : 'Media sent as data: Vaider runs over stdio, with no local address to load from.',
      refused: 'Some media could not be shown.',
      none: '',
    }[mode];
  }

  const TIME = /\b(?:(\d{1,2}):)?(\d{1,2}):(\d{2})(?:\.(\d{1,3}))?\b/g;

  /** `text` as nodes, each time in it (00:03, 1:02:03, 00:03.5) a button calling `seek`. */
  function withTimes(text, seek) {
    const out = document.createDocumentFragment();
    let at = 0;
    for (const m of String(text || '').matchAll(TIME)) {
      const seconds = (Number(m[1] || 0) * 3600) + Number(m[2]) * 60 + Number(m[3]) + (m[4] ? Number(`0.${m[4]}`) : 0);
      out.append(document.createTextNode(text.slice(at, m.index)));
      const b = document.createElement('button');
      b.className = 'time';
      b.type = 'button';
      b.textContent = m[0];
      b.dataset.t = String(seconds);
      b.addEventListener('click', () => seek(seconds, b));
      out.append(b);
      at = m.index + m[0].length;
    }
    out.append(document.createTextNode(String(text || '').slice(at)));
    return out;
  }

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  function badge(word, kind) { return el('span', { class: `badge ${kind || word}`, text: String(word).replace(/_/g, ' ') }); }

  function fail(message) {
    const main = document.querySelector('main');
    main.replaceChildren(el('p', { class: 'error', text: message }));
  }

  return { start, callTool, errorOf, loadMedia, noteMedia, withTimes, el, badge, fail };
})();
