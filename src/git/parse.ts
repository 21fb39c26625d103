/** Pure parsers for git's machine-readable output. Each is tested on literal strings. */

export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** Full ref name, e.g. `refs/heads/feat/T-1`; null when detached or bare. */
  branch: string | null;
  bare: boolean;
  detached: boolean;
  /** null when not locked; the reason (possibly empty) when locked. */
  locked: string | null;
  /** null when not prunable; git's reason otherwise. */
  prunable: string | null;
}

/** Parses `git worktree list --porcelain -z`. */
export function parseWorktreeList(output: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of output.split('\0')) {
    if (field === '') {
      if (current) entries.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? '' : field.slice(space + 1);
    if (key === 'worktree') {
      if (current) entries.push(current);
      current = { path: value, head: null, branch: null, bare: false, detached: false, locked: null, prunable: null };
      continue;
    }
    if (!current) continue;
    switch (key) {
      case 'HEAD':
        current.head = value;
        break;
      case 'branch':
        current.branch = value;
        break;
      case 'bare':
        current.bare = true;
        break;
      case 'detached':
        current.detached = true;
        break;
      case 'locked':
        current.locked = value;
        break;
      case 'prunable':
        current.prunable = value;
        break;
      default:
        break;
    }
  }
  if (current) entries.push(current);
  return entries;
}

export interface StatusEntry {
  /** Two-letter porcelain v1 code, e.g. ` M`, `??`, `R `. */
  code: string;
  path: string;
  /** For renames and copies: where it came from. */
  from?: string;
}

/** Parses `git status --porcelain=v1 -z`. */
export function parseStatusZ(output: string): StatusEntry[] {
  const fields = output.split('\0');
  const entries: StatusEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (field === undefined || field.length < 4) continue;
    const code = field.slice(0, 2);
    const path = field.slice(3);
    if (code[0] === 'R' || code[0] === 'C' || code[1] === 'R' || code[1] === 'C') {
      const from = fields[i + 1] ?? '';
      i++;
      entries.push({ code, path, from });
    } else {
      entries.push({ code, path });
    }
  }
  return entries;
}

/** Splits NUL-separated output (e.g. `ls-files -z`, `diff --name-only -z`), dropping the empty tail. */
export function splitZ(output: string): string[] {
  return output.split('\0').filter((item) => item !== '');
}

/** Splits newline-separated output, dropping blank lines. */
export function splitLines(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '');
}

export interface NameStatus {
  /** git's status letter: A, M, D, T. */
  status: string;
  path: string;
}

/** Parses `git diff --name-status -z --no-renames`: status and path alternate. */
export function parseNameStatusZ(output: string): NameStatus[] {
  const fields = output.split('\0');
  const out: NameStatus[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i];
    const path = fields[i + 1];
    if (!status || path === undefined || path === '') continue;
    out.push({ status: status.slice(0, 1), path });
  }
  return out;
}

export interface NumstatEntry {
  path: string;
  /** null for a binary file. */
  added: number | null;
  deleted: number | null;
}

/**
 * Parses `git diff --numstat -z`. A plain entry is `added\tdeleted\tpath\0`; a rename is
 * `added\tdeleted\t\0old\0new\0`. Binary files show `-` counts.
 */
export function parseNumstatZ(out: string): NumstatEntry[] {
  const parts = out.split('\0');
  const files: NumstatEntry[] = [];
  const count = (s: string | undefined): number | null => (s === undefined || s === '-' ? null : Number(s));
  for (let i = 0; i < parts.length; i++) {
    const head = parts[i];
    if (!head) continue;
    const [added, deleted, ...rest] = head.split('\t');
    const name = rest.join('\t');
    if (name !== '') {
      files.push({ path: name, added: count(added), deleted: count(deleted) });
    } else {
      const from = parts[i + 1] ?? '';
      const to = parts[i + 2] ?? '';
      files.push({ path: `${from} → ${to}`, added: count(added), deleted: count(deleted) });
      i += 2;
    }
  }
  return files;
}

/** Parses `git diff --name-status -z` with renames: `R100\0old\0new\0`, else `M\0path\0`. */
export function parseNameStatusRenamesZ(output: string): { status: string; path: string; from: string | null }[] {
  const fields = output.split('\0');
  const out: { status: string; path: string; from: string | null }[] = [];
  for (let i = 0; i < fields.length; i++) {
    const status = fields[i];
    if (!status) continue;
    const letter = status.slice(0, 1);
    if (letter === 'R' || letter === 'C') {
      const from = fields[i + 1] ?? '';
      const to = fields[i + 2] ?? '';
      out.push({ status: letter, path: to, from });
      i += 2;
    } else {
      out.push({ status: letter, path: fields[i + 1] ?? '', from: null });
      i += 1;
    }
  }
  return out;
}

/**
 * Splits a `git diff` patch into one text per file, in order. Safe on content: every line of a
 * hunk starts with ` `, `+`, `-` or `\`, so only a file's header starts with `diff --git `.
 */
export function splitPatchByFile(patch: string): string[] {
  const files: string[] = [];
  let start = -1;
  let at = 0;
  while (at < patch.length) {
    const end = patch.indexOf('\n', at);
    const next = end === -1 ? patch.length : end + 1;
    if (patch.startsWith('diff --git ', at)) {
      if (start !== -1) files.push(patch.slice(start, at));
      start = at;
    }
    at = next;
  }
  if (start !== -1) files.push(patch.slice(start));
  return files;
}

/**
 * Parses `git cat-file --batch-check=%(objectname)` for `count` questions: an object id per line,
 * or `<name> missing` (or `ambiguous`) where a name resolves to none; null there.
 */
export function parseBatchCheckIds(output: string, count: number): (string | null)[] {
  const lines = output.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length !== count)
    throw new Error(`git cat-file --batch-check gave ${lines.length} answers to ${count} questions`);
  return lines.map((line) => (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(line) ? line : null));
}
