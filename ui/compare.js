// The comparison viewer of a visual_compare entry: BEFORE and AFTER (with the changed regions
// boxed and numbered) side by side, as a swipe (AFTER revealed over BEFORE by a slider), or as
// an onion skin (AFTER faded over BEFORE). The findings, which name the regions by number, are
// in the Details card beside it.

import { h } from './dom.js';

const MODES = [
  ['side', 'Side by side'],
  ['swipe', 'Swipe'],
  ['onion', 'Onion skin'],
];

// `load(img, url)` sets an image's source once the session allows it.
export function comparisonViewer(beforeUrl, afterUrl, load) {
  const before = () => load(h('img', { alt: 'Before', class: 'cmp-before' }), beforeUrl);
  const after = () => load(h('img', { alt: 'After, changed regions numbered', class: 'cmp-after' }), afterUrl);
  const stage = h('div', { class: 'cmp-stage', id: 'compare-stage' });
  const slider = h('input', {
    type: 'range', min: 0, max: 100, value: 50, id: 'compare-slider',
    'aria-label': 'How much of AFTER shows over BEFORE',
  });
  const caption = h('figcaption', { id: 'compare-caption' });
  let mode = 'side';
  let top = null;

  function apply() {
    const v = Number(slider.value);
    if (!top) return;
    if (mode === 'swipe') { top.style.clipPath = `inset(0 ${100 - v}% 0 0)`; top.style.opacity = ''; }
    if (mode === 'onion') { top.style.opacity = String(v / 100); top.style.clipPath = ''; }
  }

  function show(next) {
    mode = next;
    for (const b of switcher.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
    slider.hidden = mode === 'side';
    stage.className = `cmp-stage cmp-${mode}`;
    if (mode === 'side') {
      top = null;
      stage.replaceChildren(
        h('figure', { class: 'media' }, before(), h('figcaption', null, 'Before')),
        h('figure', { class: 'media' }, after(), h('figcaption', null, 'After')));
      caption.textContent = '';
    } else {
      top = after();
      top.classList.add('cmp-top');
      stage.replaceChildren(before(), top);
      caption.textContent = mode === 'swipe'
        ? 'Drag the slider: AFTER on the left of it, BEFORE on the right.'
        : 'Drag the slider: from BEFORE (left) to AFTER (right).';
      apply();
    }
  }

  const switcher = h('div', { class: 'cmp-modes', role: 'group', 'aria-label': 'How to compare' },
    MODES.map(([key, label]) => h('button', {
      type: 'button', class: 'btn', dataset: { mode: key }, id: `compare-${key}`,
      onclick: () => show(key),
    }, label)));
  slider.addEventListener('input', apply);
  show('side');
  return h('div', { class: 'comparison', id: 'comparison' }, switcher, stage, slider, caption);
}
