/**
 * Pure readers of one file's patch (as `git diff` writes it): its hunks, each line with its
 * numbers on both sides, and the part of a hunk around one line. The dashboard numbers its diff
 * lines the same way (web/diff.js), so a comment made on a line there names the same line here.
 */

/** `new`: the line as the workspace has it (added or unchanged); `old`: a removed line, numbered as in the base. */
export type Side = 'new' | 'old';

export interface HunkLine {
  /** ' ', '+', '-' or '\' (the "No newline at end of file" marker). */
  kind: ' ' | '+' | '-' | '\\';
  text: string;
  old: number | null;
  new: number | null;
}

export interface Hunk {
  header: string;
  oldStart: number;
  newStart: number;
  lines: HunkLine[];
}

const HEADER = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseHunks(filePatch: string): Hunk[] {
  const hunks: Hunk[] = [];
  let current: Hunk | null = null;
  let oldNo = 0;
  let newNo = 0;
  for (const raw of filePatch.split('\n')) {
    const m = HEADER.exec(raw);
    if (m) {
      oldNo = Number(m[1]);
      newNo = Number(m[2]);
      current = { header: raw, oldStart: oldNo, newStart: newNo, lines: [] };
      hunks.push(current);
      continue;
    }
    if (!current) continue;
    const kind = raw.charAt(0);
    if (kind === ' ') current.lines.push({ kind, text: raw, old: oldNo++, new: newNo++ });
    else if (kind === '-') current.lines.push({ kind, text: raw, old: oldNo++, new: null });
    else if (kind === '+') current.lines.push({ kind, text: raw, old: null, new: newNo++ });
    else if (kind === '\\') current.lines.push({ kind, text: raw, old: null, new: null });
    else current = null; // the next file's header, or the end
  }
  return hunks;
}

/**
 * The lines of the hunk holding `line` (on `side`), at most `radius` lines either side of it,
 * under a header that numbers what is shown. Null when no hunk holds that line.
 */
export function hunkAround(filePatch: string, line: number, side: Side, radius = 8): string | null {
  for (const hunk of parseHunks(filePatch)) {
    const at = hunk.lines.findIndex((l) => (side === 'new' ? l.new : l.old) === line);
    if (at === -1) continue;
    const shown = hunk.lines.slice(Math.max(0, at - radius), at + radius + 1);
    // A side with no line shown keeps the hunk's own start (0 for a file that is new or gone).
    const first = (key: 'old' | 'new'): number =>
      shown.find((l) => l[key] !== null)?.[key] ?? (key === 'old' ? hunk.oldStart : hunk.newStart);
    const count = (key: 'old' | 'new'): number => shown.filter((l) => l[key] !== null).length;
    const header = `@@ -${first('old')},${count('old')} +${first('new')},${count('new')} @@`;
    return [header, ...shown.map((l) => l.text)].join('\n');
  }
  return null;
}

/** Unchanged lines of a file around `line`, as a diff's context lines would show them. */
export function contextAround(content: string, line: number, radius = 3): string | null {
  const lines = content.split('\n');
  if (content.endsWith('\n')) lines.pop();
  if (line < 1 || line > lines.length) return null;
  const from = Math.max(1, line - radius);
  const to = Math.min(lines.length, line + radius);
  const count = to - from + 1;
  return [
    `@@ -${from},${count} +${from},${count} @@ (unchanged)`,
    ...lines.slice(from - 1, to).map((l) => ` ${l}`),
  ].join('\n');
}
