import { terminalText } from '../util/terminal-text.js';

/**
 * Plain-text tables for people; `--json` is for scripts. A cell is one line: a newline or a tab
 * in a name (a file's, a branch's) is shown as `\n` or `\t`, never a row or a column of its own.
 */
export function table(headers: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((r) => r.map((c) => terminalText(c, 'line')));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/**
 * The first line of `text` that is not blank, at most `max` characters (cut with `…`), and
 * whether anything was left out: for a table cell whose text may be a stack trace. Pure.
 */
export function firstLine(text: string, max: number): { line: string; cut: boolean } {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => l.trim() !== '');
  const first = (lines[at] ?? '').trimEnd();
  const rest = at >= 0 && lines.slice(at + 1).some((l) => l.trim() !== '');
  if (first.length <= max) return { line: first, cut: rest };
  return { line: `${first.slice(0, max - 1)}…`, cut: true };
}

export function age(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** One service of a task as `show` and `status` list it: state, where (a URL without its password), what a database came from. */
export function serviceLine(s: {
  name: string;
  kind: string;
  state: string;
  exitCode?: number | null;
  url: string | null;
  database?: string;
  from?: string;
  cluster?: string;
  pod?: string;
}): string {
  const exit = s.exitCode !== undefined ? ` (exit ${s.exitCode ?? 'killed'})` : '';
  const url = s.url ? `  ${s.url.replace(/\/\/[^@/]*@/, '//')}` : '';
  const database = s.database ? `  database ${s.database} from ${s.from}` : '';
  return `${s.name}  ${s.kind}  ${s.state}${exit}${url}${database}${serviceWhere(s)}`;
}

/** A service in a task's pod: where (its URL is that pod's loopback, not this machine's). */
export function serviceWhere(s: { cluster?: string; pod?: string }): string {
  return s.cluster ? `  in cluster ${s.cluster}${s.pod ? `, pod ${s.pod}` : ''}` : '';
}
