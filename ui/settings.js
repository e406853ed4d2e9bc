// The settings view: the analysis settings saved to config.toml (with what the environment
// overrides), the API keys kept in the OS keychain, pause and resume, and start at login.

import { h, $ } from './dom.js';
import { api } from './api.js';
import { app, on } from './state.js';
import { setServerPaused } from './server.js';
import { errorState, renderBanners, renderServerState, toast } from './shell.js';
import { route } from './router.js';

const FIELDS = [
  { key: 'provider', label: 'Provider', type: 'select', env: ['VAIDER_PROVIDER'], help: 'Answers every request that names no provider.' },
  { key: 'model', label: 'Model', type: 'text', env: ['VAIDER_MODEL', 'VAIDER_GEMINI_MODEL'], help: 'The default provider’s default model.' },
  { key: 'timeoutSec', label: 'Timeout (seconds)', type: 'number', min: 1, env: ['VAIDER_TIMEOUT_SEC'], help: 'Time limit of one analysis, upload included.' },
  { key: 'maxAttempts', label: 'Max attempts (retry limit)', type: 'number', min: 1, env: ['VAIDER_MAX_ATTEMPTS'], help: 'Tries per call for rate limits and server errors.' },
  { key: 'maxCallsPerMinute', label: 'Model calls a minute, per provider', type: 'number', min: 0, env: ['VAIDER_MAX_CALLS_PER_MINUTE'], help: 'Your own cap per provider, key and model; the rest queue. 0: none (the provider’s quota is learned from its answers).' },
  { key: 'maxModelCalls', label: 'Model calls per request', type: 'number', min: 1, max: 1000, env: ['VAIDER_MAX_MODEL_CALLS'], help: 'At most this many model calls for one request (analysing test results: one per failed test); the answer says which were skipped.' },
  { key: 'maxConcurrent', label: 'Max concurrent analyses', type: 'number', min: 1, env: ['VAIDER_MAX_CONCURRENT'], help: 'Analyses talking to the provider at once; the rest queue.' },
  { key: 'videoSampling', label: 'Video sampling', type: 'select', options: ['auto', 'full', 'keyframes'], env: ['VAIDER_VIDEO_SAMPLING'], help: 'How a video goes to a model that takes video. auto: only the moments where the screen changes, when cheaper (about 5x fewer tokens on a mostly still recording); full: the whole video at one frame a second, for animations and video players; keyframes: still frames.' },
  { key: 'cache', label: 'Cache', type: 'checkbox', env: ['VAIDER_CACHE'], help: 'Answer a repeated request (same media, prompt and model) from the history, at no cost.' },
  { key: 'downloadLimitMb', label: 'Download limit (MB)', type: 'number', min: 1, env: ['VAIDER_DOWNLOAD_LIMIT_MB'], help: 'Largest file fetched from an http(s) URL.' },
  { key: 'childEnvPass', label: 'Variables passed to test runs', type: 'list', env: ['VAIDER_CHILD_ENV_PASS'], help: 'Comma-separated environment variables the programs Vaider starts (Playwright, ffmpeg, Chromium) also get, beyond PATH, HOME, locale, proxy and CI settings. A key, token or password never passes.' },
  { key: 'port', label: 'Port', type: 'number', min: 1, max: 65535, env: ['VAIDER_PORT'], help: 'Applies after a restart.' },
  { key: 'dataDir', label: 'Data folder', type: 'text', env: ['VAIDER_DATA_DIR'], help: 'History and downloads. Empty: the OS data folder. Applies after a restart.' },
];

// A list setting (childEnvPass) as the text field shows it.
function listText(names) {
  return names.join(', ');
}

export function settingsView(root) {
  let s = null;
  let dirty = false;
  let destroyed = false;
  const inputs = {};
  document.title = 'Vaider: settings';

  const status = h('p', { class: 'loading' }, 'Loading the settings…');
  const formNote = h('div', { class: 'save-note', id: 'settings-note', role: 'status', 'aria-live': 'polite' });
  const form = h('form', { class: 'card settings-form', id: 'settings-form', novalidate: true });
  const keys = h('section', { class: 'card', id: 'keys', 'aria-labelledby': 'keys-title' });
  const server = h('section', { class: 'card', id: 'server-section', 'aria-labelledby': 'server-title' });
  const desktop = h('section', { class: 'card', id: 'desktop-section', hidden: true, 'aria-labelledby': 'desktop-title' });
  root.append(h('div', { class: 'page-head' }, h('h1', null, 'Settings')), status,
    h('div', { class: 'settings-grid', hidden: true, id: 'settings-grid' }, form, h('div', { class: 'settings-side' }, keys, server, desktop)));

  async function load() {
    try {
      s = await api('/api/settings');
      if (destroyed) return;
      app.settings = s;
      app.paused = Boolean(s.paused);
      renderServerState();
      renderBanners();
      status.remove();
      $('#settings-grid', root).hidden = false;
      renderForm();
      renderKeys();
      renderServer();
    } catch (e) {
      if (destroyed) return;
      status.replaceWith(errorState('Could not load the settings', e, () => { route(); }));
    }
  }

  // envOverrides: the {field, variable} of each field an environment variable sets.
  function overrides() {
    return s.envOverrides;
  }

  function envFor(field) {
    return overrides().filter((o) => o.field === field.key || field.env.includes(o.variable)).map((o) => o.variable);
  }

  function renderForm() {
    const v = s.values;
    const rows = [];
    for (const field of FIELDS) {
      const id = `setting-${field.key}`;
      let input;
      if (field.type === 'select') {
        const names = field.options ? [...field.options] : s.providers.map((p) => p.name);
        if (v[field.key] && !names.includes(v[field.key])) names.unshift(v[field.key]);
        input = h('select', { id, name: field.key }, names.map((n) => h('option', { value: n }, n)));
        input.value = v[field.key] || '';
      } else if (field.type === 'checkbox') {
        input = h('input', { type: 'checkbox', id, name: field.key, checked: Boolean(v[field.key]) });
      } else {
        input = h('input', {
          type: field.type === 'list' ? 'text' : field.type, id, name: field.key, min: field.min, max: field.max,
          inputmode: field.type === 'number' ? 'numeric' : null, spellcheck: 'false', autocomplete: 'off',
          placeholder: field.key === 'dataDir' ? 'the OS data folder' : null,
        });
        input.value = field.type === 'list' ? listText(v[field.key])
          : v[field.key] === null || v[field.key] === undefined ? '' : String(v[field.key]);
      }
      if (field.key === 'model') {
        // Filled with the provider's own list once it arrives (loadModels); a typed name stays allowed.
        const list = h('datalist', { id: 'model-options' },
          [...new Set(s.providers.map((p) => p.model))].map((m) => h('option', { value: m })));
        input.setAttribute('list', 'model-options');
        rows.push(list);
      }
      inputs[field.key] = input;
      const env = envFor(field);
      const help = h('p', { class: 'help', id: `${id}-help` }, field.help,
        env.length ? h('span', { class: 'env-note' }, ` Set by ${env.join(' and ')} in the environment: that value wins over the file while it is set.`) : null);
      input.setAttribute('aria-describedby', `${id}-help`);
      const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
      const modelNote = field.key === 'model' ? h('p', { class: 'help model-note', id: 'setting-model-note', role: 'status', hidden: true }) : null;
      rows.push(field.type === 'checkbox'
        ? h('div', { class: 'field field-check', dataset: { key: field.key } },
          h('label', { for: id }, input, h('span', null, field.label)), help, error)
        : h('div', { class: 'field', dataset: { key: field.key } },
          h('label', { for: id }, field.label), input, help, modelNote, error));
    }
    // Picking another provider suggests its default model.
    inputs.provider.addEventListener('change', () => {
      const p = s.providers.find((x) => x.name === inputs.provider.value);
      const oldDefault = s.providers.find((x) => x.name === s.values.provider);
      const prefilled = p && (!inputs.model.value || (oldDefault && inputs.model.value === oldDefault.model) || inputs.model.value === s.values.model);
      if (prefilled) inputs.model.value = p.model;
      loadModels(inputs.provider.value, prefilled);
    });
    inputs.model.addEventListener('input', () => noteModel());
    loadModels(inputs.provider.value, false);
    const others = overrides().filter((o) => !FIELDS.some((f) => f.key === o.field || f.env.includes(o.variable))).map((o) => o.variable);
    form.replaceChildren(
      h('h2', null, 'Analyses'),
      ...rows,
      others.length ? h('p', { class: 'help env-note' }, `Also set in the environment: ${others.join(', ')}.`) : null,
      h('p', { class: 'help' }, 'Saved to ', h('code', { class: 'path', id: 'config-path' }, s.configPath || 'config.toml'), ', the file the command line uses too.'),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'btn btn-primary', id: 'save-settings' }, 'Save'),
        h('button', { type: 'button', class: 'btn', id: 'reset-settings', onclick: () => { dirty = false; formNote.replaceChildren(); renderForm(); } }, 'Undo changes'),
        formNote));
    dirty = false;
  }

  form.addEventListener('input', () => { dirty = true; });
  form.addEventListener('change', () => { dirty = true; });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const el of form.querySelectorAll('.field-error')) { el.hidden = true; el.textContent = ''; }
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    const body = {};
    const v = s.values;
    for (const field of FIELDS) {
      const input = inputs[field.key];
      let value;
      if (field.type === 'checkbox') value = input.checked;
      else if (field.type === 'number') {
        const raw = input.value.trim();
        value = Number(raw);
        if (!raw || !Number.isInteger(value) || value < (field.min ?? 0) || (field.max && value > field.max)) {
          fieldError(field.key, `${field.label} must be a whole number${field.min ? ` of at least ${field.min}` : ''}${field.max ? ` and at most ${field.max}` : ''}.`);
          return;
        }
      } else if (field.type === 'list') {
        value = input.value.split(',').map((n) => n.trim()).filter(Boolean);
        if (value.join(',') !== listText(v[field.key]).replace(/ /g, '')) body[field.key] = value;
        continue;
      } else value = input.value.trim();
      const old = v[field.key] === null || v[field.key] === undefined ? (field.type === 'text' ? '' : v[field.key]) : v[field.key];
      if (value !== old) body[field.key] = value;
    }
    if (Object.keys(body).length === 0) {
      formNote.replaceChildren(h('span', { class: 'muted' }, 'Nothing changed.'));
      return;
    }
    const button = $('#save-settings', form);
    button.disabled = true;
    formNote.replaceChildren(h('span', { class: 'muted' }, 'Saving…'));
    try {
      const res = await api('/api/settings', { method: 'PUT', body });
      if (destroyed) return;
      const restart = res.restartNeeded;
      s = res;
      app.settings = res;
      renderBanners();
      renderForm();
      renderKeys();
      const labels = restart.map((k) => (FIELDS.find((f) => f.key === k) || { label: k }).label.toLowerCase());
      formNote.replaceChildren(h('span', { class: 'saved', id: 'saved' }, 'Saved.'),
        restart.length ? h('span', { class: 'restart-note', id: 'restart-needed' },
          ` Restart Vaider for the new ${labels.join(' and ')} to apply.`) : null);
    } catch (err) {
      const key = FIELDS.map((f) => f.key).find((k) => new RegExp(`\\b(${k}|${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)})\\b`, 'i').test(err.message));
      if (key) fieldError(key, err.message);
      formNote.replaceChildren(h('span', { class: 'error-text', id: 'settings-error' }, `Not saved: ${err.message}`));
    } finally {
      button.disabled = false;
    }
  });

  // The provider's models as it lists them today (GET /api/models): offered in the model
  // field's list, shut-down ones left out, deprecated ones labelled with their shutdown day.
  let catalogue = null;
  async function loadModels(provider, replaceRetiring) {
    try {
      const c = await api(`/api/models?provider=${encodeURIComponent(provider)}`);
      if (destroyed || inputs.provider.value !== provider) return;
      catalogue = c;
      const options = c.models.filter((m) => m.lifecycle.state !== 'shutDown').map((m) => {
        const notes = [m.default ? 'default' : '', m.lifecycle.state === 'deprecated' ? `deprecated, shuts down ${m.lifecycle.shutdown}` : '', m.listed ? '' : 'not listed'].filter(Boolean);
        return h('option', { value: m.id, label: notes.length ? `${m.id} (${notes.join(', ')})` : m.id });
      });
      $('#model-options', form)?.replaceChildren(...options);
      const current = c.models.find((m) => m.id === inputs.model.value);
      if (replaceRetiring && current && current.lifecycle.state !== 'current') inputs.model.value = c.defaultModel;
      noteModel();
    } catch (e) {
      catalogue = null;
      noteModel(`Could not list ${provider}'s models (${e.message}); type a model name.`);
    }
  }

  // Says when the chosen model is going away or is not served, and what to pick instead.
  function noteModel(text) {
    const note = $('#setting-model-note', form);
    if (!note) return;
    let message = text || '';
    const typed = inputs.model.value.trim();
    const m = catalogue && catalogue.models.find((x) => x.id === typed);
    const retiring = catalogue && catalogue.retirements.find((r) => r.model === typed);
    if (!message && retiring) {
      const past = new Date().toISOString().slice(0, 10) >= retiring.shutdown;
      message = `${typed} ${past ? 'was shut down' : 'shuts down'} on ${retiring.shutdown}: pick ${retiring.replacements.join(' or ')}.`;
    } else if (!message && catalogue && typed && !catalogue.listError && !(m && m.listed)) {
      message = `${catalogue.provider} does not list ${typed}: pick one of its models.`;
    }
    if (!message && catalogue && catalogue.listError) message = `Could not list ${catalogue.provider}'s models: ${catalogue.listError}`;
    note.textContent = message;
    note.hidden = !message;
  }

  function fieldError(key, message) {
    const el = $(`#setting-${key}-error`, form);
    const input = inputs[key];
    if (el) { el.textContent = message; el.hidden = false; }
    if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
    formNote.replaceChildren(h('span', { class: 'error-text' }, message));
  }

  // keySource: "keychain", "environment", ".env file" (or a longer phrase naming the variable
  // or the file); shown as it comes, with the keychain one kept short.
  function fromKeychain(p) {
    return /keychain/i.test(p.keySource || '');
  }

  function keyStatusText(p) {
    if (!p.needsKey) return 'No key needed';
    if (!p.keySet) return 'Not set';
    if (fromKeychain(p)) return 'Key set (keychain)';
    if (p.keySource === 'environment' && p.envNames && p.envNames.length) return `Key set (environment: ${p.envNames.join(' or ')})`;
    if (p.keySource) return `Key set (${p.keySource.replace(/^environment variable /i, 'environment: ')})`;
    return 'Key set';
  }

  function renderKeys() {
    const kc = s.keychain || { available: true };
    const providers = s.providers;
    const rows = providers.map((p) => {
      const statusEl = h('span', { class: `key-status ${p.keySet ? 'is-set' : 'is-unset'}`, id: `key-status-${p.name}` }, keyStatusText(p));
      const head = h('div', { class: 'key-head' }, h('span', { class: 'key-name', id: `key-name-${p.name}` }, p.name), statusEl);
      if (!p.needsKey) {
        return h('li', { class: 'key-row key-row-local', dataset: { provider: p.name } }, head);
      }
      const inputId = `key-input-${p.name}`;
      const input = h('input', {
        type: 'password', id: inputId, name: `key-${p.name}`, autocomplete: 'new-password', spellcheck: 'false',
        placeholder: p.keySet ? 'Paste a new key' : 'Paste the key', 'data-lpignore': 'true',
      });
      const note = h('p', { class: 'key-note', id: `key-note-${p.name}`, role: 'status' });
      const setBtn = h('button', { type: 'submit', class: 'btn btn-small', id: `key-set-${p.name}` }, p.keySet ? 'Replace' : 'Set');
      const clearBtn = h('button', {
        type: 'button', class: 'btn btn-small', id: `key-clear-${p.name}`,
        'aria-label': `Clear the ${p.name} key from the keychain`,
        onclick: async () => {
          clearBtn.disabled = true;
          note.textContent = 'Clearing…';
          try {
            await api(`/api/keys/${encodeURIComponent(p.name)}`, { method: 'DELETE' });
            await afterKeyChange();
            const fresh = s.providers.find((x) => x.name === p.name);
            setNote(p.name, fresh && fresh.keySet
              ? `Removed from the keychain; a key still comes from the ${fresh.keySource || 'environment'}.`
              : 'Removed from the keychain.');
          } catch (err) {
            note.textContent = err.message;
            note.classList.add('error-text');
            clearBtn.disabled = false;
          }
        },
      }, 'Clear');
      const form2 = h('form', {
        class: 'key-form', autocomplete: 'off',
        onsubmit: async (e) => {
          e.preventDefault();
          // Take the key out of the page at once: it lives only in this request.
          let key = input.value;
          input.value = '';
          if (!key.trim()) { note.textContent = 'Paste a key first.'; return; }
          setBtn.disabled = true;
          note.classList.remove('error-text');
          note.textContent = 'Saving…';
          try {
            await api(`/api/keys/${encodeURIComponent(p.name)}`, { method: 'PUT', body: { key } });
            key = null;
            await afterKeyChange();
            setNote(p.name, 'Saved in the keychain.');
          } catch (err) {
            key = null;
            note.textContent = err.message;
            note.classList.add('error-text');
            setBtn.disabled = false;
          }
        },
      },
      h('label', { class: 'sr-only', for: inputId }, `New ${p.name} API key`),
      input, setBtn, clearBtn);
      return h('li', { class: 'key-row', dataset: { provider: p.name } },
        head, form2, note,
        p.keySet && p.keySource && !fromKeychain(p)
          ? h('p', { class: 'help' }, `The key from the ${p.keySource} is used before the keychain.`) : null);
    });
    const configDir = (s.configPath || '').replace(/[\\/][^\\/]*$/, '') || 'the config folder';
    keys.replaceChildren(
      h('h2', { id: 'keys-title' }, 'API keys'),
      kc.available === false
        ? h('div', { class: 'notice notice-warn', id: 'keychain-unavailable', role: 'note' },
          h('strong', null, 'Keys cannot be stored in a keychain here. '),
          h('span', { class: 'keychain-message' }, `${kc.message || 'No OS keychain is available.'} `),
          kc.message && /GEMINI_API_KEY/.test(kc.message) ? null : [
            'Keys can still come from the environment: set ', h('code', null, 'GEMINI_API_KEY'),
            ' (or ', h('code', null, '<PROVIDER>_API_KEY'), ') where the server runs, or put that line in a ',
            h('code', null, '.env'), ' file in the project folder or in ', h('code', { class: 'path' }, configDir), '.'])
        : h('p', { class: 'help' }, 'Keys are kept in the OS keychain and are never shown again, not even here.'),
      h('ul', { class: 'key-list', 'aria-label': 'Providers and their keys' }, rows));
  }

  const keyNotes = {};
  function setNote(provider, text) {
    keyNotes[provider] = text;
    const el = $(`#key-note-${CSS.escape(provider)}`, keys);
    if (el) el.textContent = text;
  }

  async function afterKeyChange() {
    const fresh = await api('/api/settings');
    if (destroyed) return;
    s.providers = fresh.providers;
    s.keychain = fresh.keychain;
    app.settings = fresh;
    renderKeys();
    renderBanners();
  }

  function renderServer() {
    const paused = app.paused;
    server.replaceChildren(
      h('h2', { id: 'server-title' }, 'Server'),
      h('p', { id: 'server-status-text' }, paused
        ? 'Paused: agents get 503 PAUSED until you resume.'
        : 'Running: agents can ask for analyses.'),
      h('button', {
        type: 'button', class: 'btn', id: paused ? 'resume-server' : 'pause-server',
        onclick: async (e) => {
          e.currentTarget.disabled = true;
          try { await setServerPaused(!paused); } catch (err) { toast(err.message, 'error'); }
          renderServer();
        },
      }, paused ? 'Resume' : 'Pause'));
    loadDesktop();
  }

  async function loadDesktop() {
    let dsk;
    try { dsk = await api('/api/desktop'); } catch { dsk = { available: false }; }
    if (destroyed) return;
    desktop.hidden = !dsk.available;
    if (!dsk.available) return;
    const note = h('p', { class: 'key-note', role: 'status' });
    const box = h('input', {
      type: 'checkbox', id: 'autostart', checked: Boolean(dsk.autostart),
      onchange: async () => {
        box.disabled = true;
        try {
          await api('/api/desktop', { method: 'PUT', body: { autostart: box.checked } });
          note.textContent = box.checked ? 'Vaider starts when you log in.' : 'Vaider no longer starts at login.';
        } catch (err) {
          box.checked = !box.checked;
          note.textContent = err.message;
        } finally { box.disabled = false; }
      },
    });
    desktop.replaceChildren(h('h2', { id: 'desktop-title' }, 'Desktop app'),
      h('div', { class: 'field field-check' }, h('label', { for: 'autostart' }, box, h('span', null, 'Start at login'))),
      note);
  }

  const offs = [
    on('settings', async () => {
      if (dirty || destroyed) return;
      try {
        const fresh = await api('/api/settings');
        if (destroyed || dirty) return;
        const keep = formNote.cloneNode(true);
        s = fresh;
        renderForm();
        formNote.replaceChildren(...keep.childNodes);
        renderKeys();
      } catch { /* keep what is shown */ }
    }),
    on('server', () => { if (s) renderServer(); }),
    on('reconnect', () => { if (!dirty) load(); }),
  ];
  load();
  return { destroy() { destroyed = true; offs.forEach((off) => off()); } };
}
