// How values read in the page: local times, durations, costs, sizes, file names and where a
// file sits, and the status badge. Pure functions apart from the badge (an element).

import { h } from './dom.js';

// Times in the table are formatted by hand: Intl formatters cost tens of milliseconds to set
// up, which the first paint of the history should not pay. The detail page uses them lazily.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n) => String(n).padStart(2, '0');
let fullDateFormat = null;
let relativeFormat = null;

export function parseDate(iso) {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Local time: "14:03:21" today, "Nov 21, 14:03" another day, "Nov 21 2025, 14:03" another year. */
export function fmtTime(iso) {
  const d = parseDate(iso);
  if (!d) return '—';
  const now = new Date();
  const hm = `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  if (d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate()) {
    return `${hm}:${pad2(d.getSeconds())}`;
  }
  const year = d.getFullYear() === now.getFullYear() ? '' : ` ${d.getFullYear()}`;
  return `${MONTHS[d.getMonth()]} ${d.getDate()}${year}, ${hm}`;
}

export function fmtFullTime(iso) {
  const d = parseDate(iso);
  if (!d) return '—';
  fullDateFormat = fullDateFormat || new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  return fullDateFormat.format(d);
}

export function relTime(iso) {
  const d = parseDate(iso);
  if (!d) return '';
  relativeFormat = relativeFormat || new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const relative = relativeFormat;
  const secs = (d.getTime() - Date.now()) / 1000;
  const abs = Math.abs(secs);
  if (abs < 45) return relative.format(Math.round(secs), 'second');
  if (abs < 45 * 60) return relative.format(Math.round(secs / 60), 'minute');
  if (abs < 22 * 3600) return relative.format(Math.round(secs / 3600), 'hour');
  if (abs < 26 * 86400) return relative.format(Math.round(secs / 86400), 'day');
  if (abs < 320 * 86400) return relative.format(Math.round(secs / (30 * 86400)), 'month');
  return relative.format(Math.round(secs / (365 * 86400)), 'year');
}

/** A duration as Playwright prints it: "850ms", "5.1s", "2.5m", "1.2h". */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return '—';
  const n = Math.max(0, Number(ms));
  if (n < 1000) return `${Math.round(n)}ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)}s`;
  if (n < 3_600_000) return `${(n / 60_000).toFixed(1)}m`;
  return `${(n / 3_600_000).toFixed(1)}h`;
}

export function fmtCost(usd) {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  if (usd < 1) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function fmtInt(n) {
  return n === null || n === undefined ? '—' : Number(n).toLocaleString();
}

export function basename(path) {
  if (!path) return '';
  const parts = String(path).split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

export function shortPath(path, max = 42) {
  if (!path) return '';
  return path.length <= max ? path : `…${path.slice(path.length - max + 1)}`;
}

export function dirname(p) {
  const i = Math.max(String(p).lastIndexOf('/'), String(p).lastIndexOf('\\'));
  return i > 0 ? String(p).slice(0, i) : '';
}

/** Where a file sits, short: "shop › test-results/login" (project, then the folder inside it). */
export function whereIs(s) {
  const dir = dirname(s.source || '');
  if (!dir) return s.project ? basename(s.project) : '';
  if (s.project && (dir === s.project || dir.startsWith(`${s.project}/`) || dir.startsWith(`${s.project}\\`))) {
    const inner = dir.slice(s.project.length + 1);
    return inner ? `${basename(s.project)} › ${inner}` : basename(s.project);
  }
  return shortPath(dir, 48);
}

export function plural(n, one, many) {
  return `${Number(n).toLocaleString()} ${n === 1 ? one : many}`;
}

export const STATUS_LABEL = {
  running: 'running', ok: 'ok', failed: 'failed', error: 'error', timeout: 'timeout', rejected: 'rejected', interrupted: 'interrupted',
};
export const VERDICT_LABEL = { met: 'met', not_met: 'not met', unclear: 'unclear' };

export function statusBadge(status) {
  return h('span', { class: `badge status-${status}` }, STATUS_LABEL[status] || status);
}
