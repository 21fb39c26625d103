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
  return output.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '');
}
