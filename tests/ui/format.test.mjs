// Unit tests of ui/format.js's pure functions, with Node's own runner (no npm packages, no
// browser): `node --test tests/ui/format.test.mjs`. Playwright runs only *.spec.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';

import { fmtDuration } from '../../ui/format.js';

test('durations read as Playwright prints them', () => {
  assert.equal(fmtDuration(850), '850ms');
  assert.equal(fmtDuration(0), '0ms');
  assert.equal(fmtDuration(999.4), '999ms');
  assert.equal(fmtDuration(1000), '1.0s');
  assert.equal(fmtDuration(5064.2347), '5.1s');
  assert.equal(fmtDuration(90_000), '1.5m');
  assert.equal(fmtDuration(5_400_000), '1.5h');
});

test('a missing duration is a dash, never NaN', () => {
  assert.equal(fmtDuration(null), '—');
  assert.equal(fmtDuration(undefined), '—');
  assert.equal(fmtDuration('soon'), '—');
});
