// The detail view of one analysis: its video or images, the description with timestamps that
// seek, the expectations, the facts, the interaction files, and "Run again" with an edited prompt.
// The server's detail is typed by `kind` (docs/ui-api.md): this view switches on it and reads
// each field as it is, never guessing from a tool's name or a value's shape.

import { h, $, copyText } from './dom.js';
import { basename, fmtBytes, fmtCost, fmtDuration, fmtFullTime, fmtInt, fmtTime, relTime, statusBadge, VERDICT_LABEL } from './format.js';
import { api } from './api.js';
import { app, on } from './state.js';
import { errorState } from './shell.js';
import { detailsBlock, inline, prettyJson, richText } from './richtext.js';
import { comparisonViewer } from './compare.js';
import { validationCards } from './validation.js';
import { qaRunCards } from './qarun.js';

const ERROR_HELP = {
  NO_API_KEY: () => ['Add a key for this provider in ', h('a', { href: '#/settings' }, 'Settings'),
    ', or set its environment variable (for example GEMINI_API_KEY) where the server runs, then run it again.'],
  INVALID_PATH: () => ['Check that the file exists, is readable by the server and is a video or an image '
    + '(WebM, MP4, MOV, AVI, PNG, JPEG, WebP or GIF), not empty or truncated. Relative paths are resolved against the agent’s workspace.'],
  INVALID_REQUEST: () => ['The request was malformed. Fix the arguments the agent sent (see the request JSON below).'],
  TIMEOUT: () => ['The analysis took longer than its time limit. Raise the timeout in ',
    h('a', { href: '#/settings' }, 'Settings'), ' or send a shorter clip, then run it again.'],
  UPSTREAM_ERROR: () => ['The model service failed. The response JSON below has its answer; check the key, the quota and the '
    + 'provider’s status, then run it again (rate limits are retried automatically up to the retry limit).'],
  RATE_LIMITED: () => ['The provider’s per-minute quota refused this call even after Vaider waited as it asked. '
    + 'Vaider now queues calls under that quota; run it again after the wait in the message, or ask the provider for a higher quota.'],
  QUOTA_EXHAUSTED: () => ['The provider’s daily quota for this key and model is used up: waiting minutes will not help. '
    + 'Use another model or key, or a paid tier, or run it again once the quota resets.'],
  MODEL_NOT_FOUND: () => ['The provider no longer serves this model (or never did); the message above names the current ones. Pick one in ',
    h('a', { href: '#/settings' }, 'Settings'), ' (or set VAIDER_MODEL, or run `vaider models`), then run it again.'],
  PAUSED: () => ['Vaider was paused when this arrived. Resume it (banner above or Settings) and run it again.'],
  INTERNAL: () => ['Something failed inside Vaider. The server log (VAIDER_LOG=debug) says more; run it again, and report it if it repeats.'],
};

function errorHelp(code) {
  const f = ERROR_HELP[code];
  return f ? f() : ['See the response JSON below for what came back, then run it again.'];
}

/** A media URL without its signature (`exp`, `sig`), to tell whether the file changed. */
function unsigned(url) {
  return (url || '').replace(/[?&]exp=\d+&sig=[0-9a-f]+$/, '');
}

/** Whether a signed URL's time has passed (`exp` is in seconds since 1970). */
function linkExpired(url) {
  const m = /[?&]exp=(\d+)/.exec(url || '');
  return Boolean(m) && Number(m[1]) * 1000 <= Date.now();
}

/** Sets a media element's src: a signed URL from the API, good for a few minutes. */
function withSrc(el, url) {
  el.src = url;
  return el;
}

export function detailView(root, r) {
  const id = r.id;
  let d = null;
  let destroyed = false;
  let attempts = 0;
  let retryTimer = null;
  let mediaKey = null;
  let video = null;
  let pendingSeek = r.params.get('t') ? Number(r.params.get('t')) : null;
  document.title = 'Vaider: analysis';

  const back = h('a', { href: '#/', class: 'back' }, '← History');
  const head = h('div', { class: 'detail-head' });
  const mediaPane = h('section', { class: 'media-pane', 'aria-label': 'Media' });
  const infoPane = h('section', { class: 'info-pane', 'aria-label': 'Analysis' });
  const runAgain = h('section', { class: 'run-again-wrap' });
  const layout = h('div', { class: 'detail-layout', hidden: true }, mediaPane, h('div', { class: 'info-col' }, infoPane, runAgain));
  const status = h('div', { class: 'detail-status' }, h('p', { class: 'loading' }, 'Loading the analysis…'));
  root.append(h('div', { class: 'detail' }, back, head, status, layout));

  const ctx = {
    get seekable() { return Boolean(video); },
    hrefFor: (secs) => `#/i/${encodeURIComponent(id)}?t=${secs}`,
  };

  root.addEventListener('click', (e) => {
    const a = e.target.closest('a.ts');
    if (!a || !video) return;
    e.preventDefault();
    seek(Number(a.dataset.t));
  });

  function seek(t) {
    if (!video || !Number.isFinite(t)) return;
    video.currentTime = t;
    const p = video.play();
    if (p && p.catch) p.catch(() => { /* autoplay refused: the frame still shows */ });
    const rect = video.getBoundingClientRect();
    if (rect.bottom < 0 || rect.top > window.innerHeight) video.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  async function load() {
    try {
      const data = await api(`/api/interactions/${encodeURIComponent(id)}`);
      if (destroyed) return;
      d = data;
      app.pending.delete(id);
      render();
    } catch (e) {
      if (destroyed) return;
      if (e.status === 404 && app.pending.has(id) && attempts < 30) {
        attempts += 1;
        status.replaceChildren(h('p', { class: 'loading' }, 'Starting the new analysis…'));
        clearTimeout(retryTimer);
        retryTimer = setTimeout(load, 500);
        return;
      }
      if (d) return; // keep showing what we have
      if (e.status === 404) {
        status.replaceChildren(h('div', { class: 'state-card', id: 'detail-not-found' },
          h('h1', null, 'Not in the history'),
          h('p', null, 'There is no analysis with the id ', h('code', null, id), '. It may come from another data folder. ',
            h('a', { href: '#/' }, 'Back to the history'), '.')));
      } else {
        status.replaceChildren(errorState('Could not load this analysis', e, load));
      }
    }
  }

  function render() {
    status.replaceChildren();
    layout.hidden = false;
    document.title = `Vaider: ${d.fileName || basename(d.source) || 'analysis'}`;
    renderHead();
    // The signature changes with each load; the file shown does not.
    const key = `${unsigned(d.mediaUrl)}|${unsigned(d.expectedMediaUrl)}|${d.mediaType}`;
    if (key !== mediaKey) { mediaKey = key; renderMedia(); }
    renderInfo();
    if (!runAgain.firstChild) renderRunAgain();
  }

  function renderHead() {
    head.replaceChildren(
      h('h1', { class: 'detail-title', title: d.source || '' }, d.fileName || basename(d.source) || '(no file)'),
      h('div', { class: 'detail-meta' },
        statusBadge(d.status),
        d.cached ? h('span', { class: 'badge badge-cached' }, 'cached') : null,
        h('span', { class: 'tool' }, d.tool),
        h('span', { class: 'muted' }, `${d.provider} · ${d.model}`),
        h('time', { datetime: d.createdAt, title: fmtFullTime(d.createdAt), class: 'muted' }, `${fmtTime(d.createdAt)} (${relTime(d.createdAt)})`)));
  }

  function renderMedia() {
    video = null;
    const parts = [];
    const isVideo = (d.mediaType || '').startsWith('video/');
    const isImage = (d.mediaType || '').startsWith('image/');
    if (d.mediaUrl && isVideo) {
      video = h('video', {
        id: 'media-video', controls: true, preload: 'auto', playsinline: true,
        'aria-label': `Video: ${d.fileName || ''}`,
      });
      const el = video;
      el.src = d.mediaUrl;
      video.addEventListener('error', async () => {
        // Its signed URL ran out while the video stayed open: a fresh one, at the same time.
        if (linkExpired(el.src)) {
          try {
            const fresh = await api(`/api/interactions/${encodeURIComponent(id)}`);
            if (fresh.mediaUrl && !linkExpired(fresh.mediaUrl) && el === video) {
              const t = el.currentTime;
              el.addEventListener('loadedmetadata', () => { el.currentTime = t; }, { once: true });
              el.src = fresh.mediaUrl;
              return;
            }
          } catch { /* say it could not be played */ }
        }
        const note = $('.media-error', mediaPane) || h('p', { class: 'media-error notice' });
        note.textContent = 'The video could not be played here. The file may have moved since the analysis; its path is '
          + `${d.source}.`;
        mediaPane.append(note);
      });
      if (pendingSeek !== null && Number.isFinite(pendingSeek)) {
        const t = pendingSeek;
        pendingSeek = null;
        video.addEventListener('loadedmetadata', () => { video.currentTime = t; }, { once: true });
      }
      parts.push(h('figure', { class: 'media' }, video));
    } else if (d.kind === 'comparison' && d.mediaUrl && d.expectedMediaUrl) {
      parts.push(comparisonViewer(d.expectedMediaUrl, d.mediaUrl, withSrc, d.comparison));
    } else if (d.mediaUrl && (isImage || d.expectedMediaUrl)) {
      if (d.expectedMediaUrl) {
        parts.push(h('figure', { class: 'media' },
          withSrc(h('img', { alt: 'Expected screenshot', id: 'media-expected' }), d.expectedMediaUrl),
          h('figcaption', null, 'Expected')));
        parts.push(h('figure', { class: 'media' },
          withSrc(h('img', { alt: 'Actual screenshot', id: 'media-image' }), d.mediaUrl),
          h('figcaption', null, 'Actual')));
      } else {
        parts.push(h('figure', { class: 'media' },
          withSrc(h('img', { alt: `Screenshot: ${d.fileName || ''}`, id: 'media-image' }), d.mediaUrl)));
      }
    } else {
      // Nothing playable: a refused file (a text file, a key) is never linked from here.
      parts.push(h('div', { class: 'media-missing', id: 'media-missing' },
        h('p', null, d.status === 'rejected'
          ? 'The request was refused before the file was read, so there is no media to show.'
          : 'No video or image was recorded for this analysis.')));
    }
    parts.push(h('p', { class: 'media-source muted', title: d.source || '' }, d.source || ''));
    mediaPane.replaceChildren(...parts);
  }

  function fact(label, ...value) {
    return [h('dt', null, label), h('dd', null, ...value)];
  }

  function renderInfo() {
    const sections = [];
    if (d.status === 'running') {
      sections.push(h('div', { class: 'running-note', id: 'running-note' },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        `Analysing… started ${relTime(d.createdAt)}. This page updates when it finishes.`));
    }
    if (d.status === 'failed') {
      // The test or the plan did its job: it found the app at fault. A result, not an error.
      const plan = d.kind === 'test_plan_run';
      const what = plan ? 'The plan failed' : 'The test failed';
      sections.push(h('div', { class: 'error-box status-failed', id: 'failed-box', role: 'status' },
        h('div', { class: 'error-title' },
          h('span', { class: 'badge status-failed', id: 'failed-title' }, 'failed'),
          h('span', null, ` ${what}: the app did not do what it expects.`)),
        h('p', { class: 'error-message', id: 'failed-what' }, d.errorMessage || 'No step or test was named.'),
        h('p', { class: 'error-help' }, h('strong', null, 'What to do: '),
          plan
            ? 'see the failing step below (its screenshot and the video at that moment); fix the app or the plan, then run the plan again.'
            : 'see the failing tests below (Playwright’s message and the spec line) and the trace; fix the app or the test, then run it again.')));
    } else if (d.errorCode || ['error', 'timeout', 'rejected', 'interrupted'].includes(d.status)) {
      sections.push(h('div', { class: `error-box status-${d.status}`, id: 'error-box', role: 'alert' },
        h('div', { class: 'error-title' },
          h('code', { class: 'code', id: 'error-code' }, d.errorCode || d.status.toUpperCase()),
          h('span', null, d.status === 'rejected' ? ' The request was refused.' : d.status === 'timeout' ? ' The analysis timed out.' : d.status === 'interrupted' ? ' The analysis was interrupted.' : ' The analysis failed.')),
        h('p', { class: 'error-message', id: 'error-message' }, d.errorMessage || 'No message was recorded.'),
        h('p', { class: 'error-help' }, h('strong', null, 'What to do: '), ...errorHelp(d.errorCode))));
    }
    if (d.description) {
      sections.push(h('div', { class: 'card' },
        h('h2', null, 'Description'),
        h('div', { class: 'prose description', id: 'description' }, richText(d.description, ctx))));
    } else if (d.status === 'ok') {
      sections.push(h('div', { class: 'card' }, h('h2', null, 'Description'), h('p', { class: 'muted' }, 'The model gave no description.')));
    }
    sections.push(...kindCards());
    if (!jobHasAnswer() && (verdicts().length || d.expectations.length)) {
      const list = verdicts().length ? verdicts() : d.expectations.map((e) => ({ expectation: e, verdict: null }));
      sections.push(h('div', { class: 'card', id: 'expectations' },
        h('h2', null, 'Expectations',
          d.allExpectationsMet === true ? h('span', { class: 'badge verdict-met' }, 'all met') : null,
          d.allExpectationsMet === false ? h('span', { class: 'badge verdict-not_met' }, 'not all met') : null),
        h('ul', { class: 'verdicts' }, list.map((v) => h('li', { class: 'verdict' },
          h('div', { class: 'verdict-head' },
            v.verdict ? h('span', { class: `badge verdict-${v.verdict}` }, VERDICT_LABEL[v.verdict] || v.verdict)
              : h('span', { class: 'badge' }, 'pending'),
            h('span', { class: 'expectation' }, v.expectation)),
          v.evidence ? h('div', { class: 'evidence prose' }, richText(v.evidence, ctx)) : null)))));
    }
    if (isCall() && d.details !== null) {
      sections.push(h('div', { class: 'card', id: 'details' }, h('h2', null, 'Details'), detailsBlock(d.details, ctx)));
    }
    const usage = d.usage;
    const facts = h('dl', { class: 'facts', id: 'facts' },
      fact('Provider', d.provider || '—'),
      fact('Model', d.model || '—'),
      fact('Tool', h('span', { class: 'tool' }, d.tool), d.door ? h('span', { class: 'muted' }, ` via ${d.door}`) : null),
      fact('Started', h('time', { datetime: d.createdAt, title: relTime(d.createdAt) }, fmtFullTime(d.createdAt))),
      fact('Duration', fmtDuration(d.durationMs)),
      fact('Cost', fmtCost(d.costUsd), d.cached ? h('span', { class: 'muted' }, ' (answered from the cache)') : null),
      fact('Tokens', `${fmtInt(usage.inputTokens)} in${usage.estimatedInputTokens != null ? ` (estimated ${fmtInt(usage.estimatedInputTokens)})` : ''} · ${fmtInt(usage.outputTokens)} out`),
      fact('Cached', d.cached ? 'yes' : 'no'),
      isCall() && d.framesAnalysed ? fact('Frames analysed', String(d.framesAnalysed)) : null,
      isCall() && d.sampling ? fact('Video sampling', samplingFact(d.sampling, usage, ctx)) : null,
      fact('Media', `${d.mediaType || '—'}${d.sizeBytes ? `, ${fmtBytes(d.sizeBytes)}` : ''}`),
      d.project ? fact('Project', h('span', { class: 'path' }, d.project)) : null,
      d.prompt ? fact('Prompt', h('span', { class: 'prompt-text' }, d.prompt)) : null,
      isCall() && d.adaptations.length
        ? fact('Adaptations', h('ul', { class: 'plain' }, d.adaptations.map((a) => h('li', null, a)))) : null);
    sections.push(h('div', { class: 'card' }, h('h2', null, 'Facts'), facts));

    if (d.logDir) {
      const note = h('span', { class: 'action-note', role: 'status' });
      sections.push(h('div', { class: 'card', id: 'log-folder' },
        h('h2', null, 'Log folder'),
        h('p', null, h('code', { class: 'path', id: 'log-dir' }, d.logDir)),
        h('div', { class: 'actions' },
          h('button', {
            type: 'button', class: 'btn', id: 'copy-log-dir',
            onclick: async () => { note.textContent = (await copyText(d.logDir)) ? 'Path copied.' : 'Could not copy: select the path above.'; },
          }, 'Copy path'),
          h('button', {
            type: 'button', class: 'btn', id: 'open-folder',
            onclick: async (e) => {
              const btn = e.currentTarget;
              btn.disabled = true;
              note.textContent = 'Opening…';
              try {
                await api(`/api/interactions/${encodeURIComponent(id)}/open-folder`, { method: 'POST' });
                note.textContent = 'Opened in the file manager.';
              } catch (err) {
                note.textContent = `Could not open it: ${err.message}`;
              } finally { btn.disabled = false; }
            },
          }, 'Open folder'),
          note)));
    }
    sections.push(h('div', { class: 'card raw' },
      h('h2', null, 'What was sent and what came back'),
      rawBlock('Request JSON', d.requestJson, 'request-json'),
      rawBlock('Response JSON', d.responseJson, 'response-json')));
    infoPane.replaceChildren(...sections);
  }

  function rawBlock(label, value, idName) {
    const open = document.getElementById(idName)?.open || false;
    return h('details', { id: idName, open },
      h('summary', null, label),
      value === null || value === undefined
        ? h('p', { class: 'muted' }, 'Not written (the request was refused before it, or the file is gone).')
        : h('pre', { class: 'json' }, h('code', null, prettyJson(value))));
  }

  // A model call (an analysis or a comparison) has the answer's fields; a job has `job`.
  function isCall() { return d.kind === 'analysis' || d.kind === 'comparison'; }
  function verdicts() { return isCall() ? d.verdicts : []; }
  // A job with an answer or model calls shows them; its expectations are judged in its video
  // analysis, shown with it.
  function jobHasAnswer() { return !isCall() && (d.job.result !== null || d.job.calls.length > 0); }

  function kindCards() {
    switch (d.kind) {
      case 'test_plan_run': return jobHasAnswer() ? qaRunCards(d.job, withSrc, ctx) : [];
      case 'test_validation':
      case 'job': return jobHasAnswer() ? validationCards(d.job, withSrc, ctx) : [];
      default: return [];
    }
  }

  function renderRunAgain() {
    if (d.runAgain === 'same_inputs') { renderJobAgain(); return; }
    if (d.runAgain !== 'edit_prompt') { runAgain.replaceChildren(); return; }
    const prompt = h('textarea', { id: 'run-prompt', rows: 4, spellcheck: 'false' });
    prompt.value = d.prompt;
    const expectations = h('textarea', { id: 'run-expectations', rows: 3, spellcheck: 'false', placeholder: 'One expectation per line' });
    expectations.value = d.expectations.join('\n');
    const note = h('p', { class: 'action-note', role: 'status', id: 'run-again-note' });
    const button = h('button', { type: 'submit', class: 'btn btn-primary', id: 'run-again' }, 'Run again');
    const form = h('form', {
      class: 'card run-again',
      onsubmit: async (e) => {
        e.preventDefault();
        button.disabled = true;
        note.textContent = 'Starting…';
        const body = {
          prompt: prompt.value,
          expectations: expectations.value.split('\n').map((s) => s.trim()).filter(Boolean),
        };
        try {
          const res = await api(`/api/interactions/${encodeURIComponent(id)}/run-again`, { method: 'POST', body });
          app.pending.add(res.id);
          location.hash = `#/i/${encodeURIComponent(res.id)}`;
        } catch (err) {
          note.textContent = `${err.code && err.code !== 'UNREACHABLE' ? `${err.code}: ` : ''}${err.message}`;
          note.classList.add('error-text');
          button.disabled = false;
        }
      },
    },
    h('h2', null, 'Run again'),
    h('p', { class: 'muted' }, 'The same media through the same pipeline, with the cache off. Edit the prompt or the expectations first if you like.'),
    h('label', { for: 'run-prompt' }, 'Prompt'), prompt,
    h('label', { for: 'run-expectations' }, 'Expectations (one per line)'), expectations,
    h('div', { class: 'actions' }, button, note));
    runAgain.replaceChildren(form);
  }

  // A plan's run or a validation runs again as it was: the plan, or the test file, through
  // the server's own service (no prompt to edit).
  function renderJobAgain() {
    const plan = d.kind === 'test_plan_run';
    const note = h('p', { class: 'action-note', role: 'status', id: 'run-again-note' });
    const button = h('button', {
      type: 'button', class: 'btn btn-primary', id: 'run-again',
      onclick: async () => {
        button.disabled = true;
        note.textContent = 'Starting…';
        try {
          const res = await api(`/api/interactions/${encodeURIComponent(id)}/run-again`, { method: 'POST', body: {} });
          app.pending.add(res.id);
          location.hash = `#/i/${encodeURIComponent(res.id)}`;
        } catch (err) {
          note.textContent = `${err.code && err.code !== 'UNREACHABLE' ? `${err.code}: ` : ''}${err.message}`;
          note.classList.add('error-text');
          button.disabled = false;
        }
      },
    }, plan ? 'Run the plan again' : 'Run the test again');
    runAgain.replaceChildren(h('div', { class: 'card run-again', id: 'job-again' },
      h('h2', null, 'Run again'),
      h('p', { class: 'muted' }, plan
        ? 'The same plan against the same base URL, in a new run.'
        : 'The same test file with the same expectations, in a new validation.'),
      h('div', { class: 'actions' }, button, note)));
  }

  const offs = [
    on('interaction', (ev) => { if (ev && ev.id === id) load(); }),
    on('reconnect', () => load()),
  ];
  // A running analysis whose "finished" event was missed still updates.
  const poll = setInterval(() => { if (d && d.status === 'running' && !document.hidden) load(); }, 5000);
  load();

  return {
    destroy() {
      destroyed = true;
      clearTimeout(retryTimer);
      clearInterval(poll);
      offs.forEach((off) => off());
      if (video) { video.pause(); video.removeAttribute('src'); video.load(); }
    },
  };
}

// How the video went to the model: the moments sent (links that seek the video) and the
// tokens Gemini's default sampling would have used.
function samplingFact(s, usage, ctx) {
  const used = { full: 'the whole video', clips: 'clips around the changes', keyframes: 'keyframes' }[s.used] || s.used;
  const parts = [h('span', { id: 'sampling-used' }, `${s.requested} → ${used}`)];
  if (s.moments.length) {
    const stamps = s.moments.map((m) => {
      const min = Math.floor(m / 60);
      return `${String(min).padStart(2, '0')}:${(m - min * 60).toFixed(1).padStart(4, '0')}`;
    });
    parts.push(h('div', { class: 'muted', id: 'sampling-moments' }, `${s.moments.length} frames at `, inline(stamps.join(', '), ctx)));
  }
  const input = usage.inputTokens;
  if (s.defaultSamplingInputTokens > input) {
    const times = (s.defaultSamplingInputTokens / Math.max(1, input)).toFixed(1);
    parts.push(h('div', { id: 'sampling-saving' },
      `${fmtInt(input)} input tokens where the default sampling would use ${fmtInt(s.defaultSamplingInputTokens)} (${times}x fewer)`));
  }
  if (s.reason) parts.push(h('div', { class: 'muted' }, s.reason));
  return h('div', null, parts);
}
