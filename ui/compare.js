// The comparison viewer of a visual_compare entry: BEFORE and AFTER (with the changed regions
// boxed and numbered) side by side, as a swipe (AFTER revealed over BEFORE by a slider), as an
// onion skin (AFTER faded over BEFORE), and the pixel diff, the heat map and the close-ups the
// model saw. Below it, each changed region with its finding and verdict: a region's box and
// its finding select each other, so the finding for a box is one click away.

import { h } from './dom.js';

const MODES = [
  ['side', 'Side by side'],
  ['swipe', 'Swipe'],
  ['onion', 'Onion skin'],
  ['diff', 'Diff', 'diffUrl'],
  ['heatmap', 'Heat map', 'heatMapUrl'],
  ['zoom', 'Close-ups', 'closeUpsUrl'],
];

// The annotation's box colours (crates/vaider-visual/src/annotate.rs), so a box here has the
// colour of its numbered box in the pictures.
const PALETTE = ['#e6194b', '#0082c8', '#f58230', '#911eb4', '#3cb44b', '#f032e6', '#008080', '#aa6e28'];
const colourOf = (n) => PALETTE[(Math.max(n, 1) - 1) % PALETTE.length];

// The region numbers a finding names: "region 2", "regions 1 and 3".
function regionNumbers(text) {
  return [...String(text || '').matchAll(/\d+/g)].map((m) => Number(m[0]));
}

// Each region of the result with what the model said of it and the verdict. `result` is
// visual_compare's data (its lists always there), or null before the comparison finished.
export function findingsByRegion(result) {
  if (result === null) return [];
  const analysis = result.agentic_analysis;
  const byNumber = new Map();
  for (const r of result.regions) {
    byNumber.set(r.number, { region: r, changes: [], verdict: 'unexplained', severity: null });
  }
  for (const c of analysis.found_changes) {
    for (const n of regionNumbers(c.region)) {
      const f = byNumber.get(n);
      if (!f) continue;
      f.changes.push(c.change);
      if (f.verdict === 'unexplained') f.verdict = 'expected';
    }
  }
  for (const c of analysis.unexpected_changes) {
    for (const n of regionNumbers(c.region)) {
      const f = byNumber.get(n);
      if (!f) continue;
      if (!f.changes.includes(c.change)) f.changes.push(c.change);
      f.verdict = 'unexpected';
      const rank = { info: 0, warning: 1, error: 2 };
      if (f.severity === null || rank[c.severity] > rank[f.severity]) f.severity = c.severity;
    }
  }
  return [...byNumber.values()];
}

function verdictText(f) {
  if (f.verdict === 'unexpected') return `unexpected · ${f.severity || 'warning'}`;
  if (f.verdict === 'expected') return 'as expected';
  return 'not explained';
}

// `load(img, url)` sets an image's source once the session allows it. `view` is the detail's
// `comparison`: the pictures' URLs (null when a picture is not there) and the result.
export function comparisonViewer(beforeUrl, afterUrl, load, view) {
  const { result } = view;
  const findings = findingsByRegion(result);
  const stage = h('div', { class: 'cmp-stage', id: 'compare-stage' });
  const slider = h('input', {
    type: 'range', min: 0, max: 100, value: 50, id: 'compare-slider',
    'aria-label': 'How much of AFTER shows over BEFORE',
  });
  const caption = h('figcaption', { id: 'compare-caption' });
  let mode = 'side';
  let top = null;
  let selected = null;

  const before = () => load(h('img', { alt: 'Before', class: 'cmp-before' }), beforeUrl);
  const after = () => load(h('img', { alt: 'After, changed regions numbered', class: 'cmp-after' }), afterUrl);

  // An image with the regions' boxes over it, each a button that selects its finding. The
  // boxes are placed in percent of the image's own size (the comparison's canvas).
  function boxed(img) {
    const layer = h('div', { class: 'cmp-boxes', 'aria-label': 'Changed regions' });
    const place = () => {
      const [w, hgt] = [img.naturalWidth, img.naturalHeight];
      if (!w || !hgt) return;
      layer.replaceChildren(...findings.map(({ region: r }) => h('button', {
        type: 'button', class: 'cmp-box', dataset: { region: r.number },
        title: `Region ${r.number}`, 'aria-label': `Region ${r.number}: show its finding`,
        style: `left:${(100 * r.x) / w}%;top:${(100 * r.y) / hgt}%;width:${(100 * r.width) / w}%;`
          + `height:${(100 * r.height) / hgt}%;--box:${colourOf(r.number)}`,
        onclick: () => select(r.number, true),
      })));
      mark();
    };
    img.addEventListener('load', place);
    if (img.complete) place();
    return h('div', { class: 'cmp-frame' }, img, layer);
  }

  function figure(img, label) {
    return h('figure', { class: 'media' }, findings.length ? boxed(img) : img, h('figcaption', null, label));
  }

  function apply() {
    const v = Number(slider.value);
    if (!top) return;
    if (mode === 'swipe') { top.style.clipPath = `inset(0 ${100 - v}% 0 0)`; top.style.opacity = ''; }
    if (mode === 'onion') { top.style.opacity = String(v / 100); top.style.clipPath = ''; }
  }

  const single = {
    diff: ['Diff: changed pixels in red over the faded BEFORE', 'cmp-diff', 'Pixel diff'],
    heatmap: ['Heat map: where changes are dense, over the dimmed AFTER', 'cmp-heatmap', 'Heat map'],
  };

  function show(next) {
    mode = next;
    for (const b of switcher.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
    slider.hidden = !['swipe', 'onion'].includes(mode);
    stage.className = `cmp-stage cmp-${mode}`;
    top = null;
    caption.textContent = '';
    if (mode === 'side') {
      stage.replaceChildren(
        h('figure', { class: 'media' }, before(), h('figcaption', null, 'Before')),
        figure(after(), 'After'));
    } else if (mode === 'swipe' || mode === 'onion') {
      top = after();
      top.classList.add('cmp-top');
      stage.replaceChildren(before(), top);
      caption.textContent = mode === 'swipe'
        ? 'Drag the slider: AFTER on the left of it, BEFORE on the right.'
        : 'Drag the slider: from BEFORE (left) to AFTER (right).';
      apply();
    } else if (single[mode]) {
      const [alt, cls, label] = single[mode];
      const url = mode === 'diff' ? view.diffUrl : view.heatMapUrl;
      stage.replaceChildren(figure(load(h('img', { alt, class: cls }), url), label));
    } else if (mode === 'zoom') {
      stage.replaceChildren(h('figure', { class: 'media' },
        load(h('img', { alt: 'Close-ups of the largest changed regions: number, BEFORE, AFTER', class: 'cmp-zoom' }), view.closeUpsUrl),
        h('figcaption', null, 'Close-ups the model saw: each row a region, BEFORE then AFTER, magnified')));
    }
  }

  // Selects a region: its box and its finding are marked, and the other one is brought into
  // view (a click on a box scrolls to its finding).
  function select(number, fromBox) {
    selected = number;
    mark();
    const target = fromBox ? list.querySelector(`[data-region="${number}"]`) : stage.querySelector(`.cmp-box[data-region="${number}"]`);
    if (target && target.scrollIntoView) target.scrollIntoView({ block: 'nearest' });
  }

  function mark() {
    for (const el of [...stage.querySelectorAll('.cmp-box'), ...list.querySelectorAll('li')]) {
      el.classList.toggle('selected', Number(el.dataset.region) === selected);
    }
  }

  const list = h('ol', { class: 'cmp-findings', id: 'compare-findings' },
    findings.map((f) => h('li', {
      dataset: { region: f.region.number }, id: `finding-${f.region.number}`,
      class: `cmp-finding verdict-${f.verdict}`, tabindex: 0,
      onclick: () => select(f.region.number, false),
      onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(f.region.number, false); } },
    },
    h('span', { class: 'cmp-tag', style: `background:${colourOf(f.region.number)}` }, String(f.region.number)),
    h('span', { class: `badge cmp-verdict severity-${f.severity || 'none'}` }, verdictText(f)),
    h('span', { class: 'cmp-change' }, f.changes.length ? f.changes.join(' ') : 'The model named no change here.'),
    h('span', { class: 'muted cmp-where' },
      ` ${f.region.width}×${f.region.height} at ${f.region.x}, ${f.region.y}; ${f.region.changed_pixels} pixels`))));

  const missed = result === null ? [] : result.validation.expected_missed;
  const findingsCard = findings.length || missed.length
    ? h('div', { class: 'cmp-findings-card' },
      h('h3', null, 'Changes'),
      list,
      missed.length
        ? h('p', { class: 'cmp-missed', id: 'compare-missed' }, h('strong', null, 'Expected but not found: '), missed.join('; '))
        : null)
    : null;

  const switcher = h('div', { class: 'cmp-modes', role: 'group', 'aria-label': 'How to compare' },
    MODES.filter(([, , needs]) => !needs || view[needs] !== null).map(([key, label]) => h('button', {
      type: 'button', class: 'btn', dataset: { mode: key }, id: `compare-${key}`,
      onclick: () => show(key),
    }, label)));
  slider.addEventListener('input', apply);
  show('side');
  return h('div', { class: 'comparison', id: 'comparison' }, switcher, stage, slider, caption, findingsCard);
}
