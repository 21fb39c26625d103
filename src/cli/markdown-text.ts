import path from 'node:path';

/**
 * A documentation page (Markdown) as text for a terminal, for `warren help`: no HTML comments (the
 * generated pages' "edit those, not this page" note is for contributors), a link shown as its
 * text and, when it leads to another page warren carries, the command that prints that page
 * (`see: warren help errors`); code blocks indented, tables as aligned columns (or, too wide for
 * a terminal, one block per row), headings underlined. Pure: `warren help` reads the page and
 * names its topics.
 */

export interface PageLinks {
  /** The page's path inside the package (`docs/commands/land.md`): relative links resolve from it. */
  page: string;
  /** The `warren help` topic of a page the package carries ('' for the command index), or null. */
  topicOf(file: string): string | null;
}

/** Wider than this, a table is shown one block per row: a terminal is often 80 to 120 columns. */
const TABLE_WIDTH = 100;

export function markdownForTerminal(markdown: string, links: PageLinks): string {
  const out: string[] = [];
  // Lines are gathered into a paragraph (a link's text may go over two lines) or a table.
  let block: { kind: 'text' | 'table'; lines: string[] } | null = null;
  const flush = (): void => {
    if (block?.kind === 'table') out.push(...renderTable(block.lines, links));
    else if (block) out.push(...inline(block.lines.join('\n'), links).split('\n'));
    block = null;
  };
  const add = (kind: 'text' | 'table', line: string): void => {
    if (block?.kind !== kind) flush();
    (block ??= { kind, lines: [] }).lines.push(line);
  };
  let fence: string | null = null;
  let comment = false;
  for (const raw of markdown.split('\n')) {
    const fenceMark = /^(\s*)(```|~~~)/.exec(raw);
    if (fence !== null) {
      // A code block shows its text as it is, comments and links too.
      if (fenceMark && raw.trim() === fenceMark[2]) fence = null;
      else out.push(`    ${raw.slice(Math.min(fence.length, raw.length - raw.trimStart().length))}`);
      continue;
    }
    const uncommented = withoutComments(raw, comment);
    comment = uncommented.open;
    if (uncommented.line === null) continue;
    const line = uncommented.line;
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (fenceMark) {
      flush();
      fence = fenceMark[1] ?? '';
    } else if (line.trimStart().startsWith('|')) add('table', line.trim());
    else if (heading) {
      flush();
      const text = inline(heading[2] ?? '', links);
      out.push(text);
      if ((heading[1]?.length ?? 1) <= 2) out.push((heading[1] === '#' ? '=' : '-').repeat(width(text)));
    } else if (line.trim() === '') {
      flush();
      out.push('');
    } else add('text', line);
  }
  flush();
  return collapseBlankLines(out).join('\n').trim();
}

/**
 * One line without its HTML comments, `open` when a comment goes on past it; null when nothing
 * but a comment was on it (the line goes with it).
 */
function withoutComments(line: string, inComment: boolean): { line: string | null; open: boolean } {
  let rest = line;
  if (inComment) {
    const end = rest.indexOf('-->');
    if (end === -1) return { line: null, open: true };
    rest = rest.slice(end + 3);
  }
  rest = rest.replace(/<!--[\s\S]*?-->/g, '');
  const start = rest.indexOf('<!--');
  const open = start !== -1;
  if (open) rest = rest.slice(0, start);
  const had = inComment || open || rest !== line;
  return { line: had && rest.trim() === '' ? null : rest, open };
}

function collapseBlankLines(lines: readonly string[]): string[] {
  return lines.filter((line, i) => line.trim() !== '' || (i > 0 && (lines[i - 1] ?? '').trim() !== ''));
}

/** `[text](href)` or `![alt](src)`; the text may hold code with brackets (`` [`land [-m MSG]`](land.md) ``). */
const LINK = /(!?)\[((?:`[^`]*`|[^\]\\`]|\\.)*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)/g;

/**
 * A paragraph's (or a cell's) inline Markdown: images become their alt text, links their text with
 * where they lead (once per line and destination: the last mention carries it), `**bold**`
 * plain text, a table's `\|` a bar. Inline code keeps its backticks: the terminal has no other
 * way to show it.
 */
function inline(text: string, links: PageLinks): string {
  const found = [...text.matchAll(LINK)].map((m) => ({
    at: m.index,
    to: m[1] === '' ? leadsTo(m[3] ?? '', links) : null,
  }));
  let i = 0;
  const linked = text.replace(LINK, (_all, bang: string, label: string) => {
    const { at, to } = found[i++] ?? { at: 0, to: null };
    if (bang === '!' || to === null || label === to) return label;
    const later = found.some((f) => f.at > at && f.to === to && !text.slice(at, f.at).includes('\n'));
    return later ? label : `${label} (${to})`;
  });
  return linked
    .replace(/\*\*(.+?)\*\*/g, '$1')
    .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
    .replace(/\\\|/g, '|');
}

/** Where a link leads, as a terminal can follow it: a URL, `see: warren help TOPIC`, or nothing (a heading of this page, a file not in the package). */
function leadsTo(href: string, links: PageLinks): string | null {
  if (/^[a-z]+:/i.test(href)) return href;
  const file = href.split('#')[0] ?? '';
  if (file === '') return null;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(links.page), file));
  if (target === links.page) return null;
  const topic = links.topicOf(target);
  if (topic === null) return null;
  return topic === '' ? 'see: warren help' : `see: warren help ${topic}`;
}

/** Columns: terminals count characters, not bytes. */
function width(text: string): number {
  return [...text].length;
}

/** A Markdown table's cells: split at each `|` that is not escaped, the outer two dropped. */
function cells(row: string): string[] {
  const parts = row.split(/(?<!\\)\|/).map((c) => c.trim());
  return parts.slice(1, parts.at(-1) === '' ? -1 : undefined);
}

function renderTable(rows: readonly string[], links: PageLinks): string[] {
  const isRule = (row: string): boolean => /^\|?[\s:|-]+\|?$/.test(row) && row.includes('-');
  const [head = [], ...body] = rows.filter((r) => !isRule(r)).map((r) => cells(r).map((c) => inline(c, links)));
  const columns = Math.max(head.length, ...body.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...[head, ...body].map((r) => width(r[c] ?? ''))));
  const total = widths.reduce((a, b) => a + b, 0) + 2 * (columns - 1);
  if (total <= TABLE_WIDTH) {
    const line = (r: readonly string[]): string =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - width(c))))
        .join('  ')
        .trimEnd();
    return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
  }
  // Too wide: each row a block, its first cell on a line of its own and the others under it (the
  // third and later named by their column: `default: main`).
  return body.flatMap((r) => [
    r[0] ?? '',
    ...r
      .slice(1)
      .map((c, i) => (c === '' ? '' : `    ${i === 0 ? '' : `${head[i + 1] ?? ''}: `}${c}`))
      .filter((l) => l !== ''),
  ]);
}
