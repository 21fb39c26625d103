/**
 * What `.worktreeinclude` selects, as git defines it: the untracked files its patterns match
 * (gitignore syntax) that git also ignores. Tracked files never are. git computes both lists
 * (`ls-files -o -i -X .worktreeinclude`, `ls-files -o -i --exclude-standard`); this module
 * only intersects them, drops what must never be copied, and groups the rest into as few
 * paths as it can, so a wholly selected 20,000-file folder is one `cp -a`, not 20,000.
 */

/** Folders of other version-control systems' metadata (git never lists `.git` itself). */
export const VCS_DIRS: ReadonlySet<string> = new Set(['.git', '.jj', '.hg', '.svn']);

export interface IncludeLists {
  /** Untracked files the include patterns match (`ls-files -o -i -X`). */
  matching: readonly string[];
  /** Untracked files git ignores (`ls-files -o -i --exclude-standard`). */
  ignored: readonly string[];
  /**
   * Untracked files git does not ignore (`ls-files -o --exclude-standard`, which does not enter
   * ignored folders, so it is cheap): with `ignored`, every untracked file a folder holds.
   */
  unignored: readonly string[];
  /** Every tracked file. */
  tracked: readonly string[];
  /** Paths provisioned by warren.yaml: their entry wins, so nothing selected may overlap them. */
  claimed: readonly string[];
}

export interface IncludeSelection {
  /** The paths to copy, disjoint: a folder where every file in it is selected, else the file. */
  paths: string[];
  /** Selected files left out, grouped: a nested repository or worktree, VCS metadata, or a path warren.yaml provisions. */
  excluded: {
    path: string;
    why: 'nested-repository' | 'vcs-metadata' | 'claimed';
    files: number;
    claimedBy?: string;
  }[];
  /** How many files the selected paths hold. */
  files: number;
  /** Untracked files the patterns match that git does not ignore: git leaves them out, and so does warren (said). */
  notIgnored: string[];
}

/** The VCS metadata folder in a path (`a/.hg/store` → `a/.hg`), or null. Pure. */
export function vcsMetadataOf(rel: string): string | null {
  const parts = rel.split('/');
  const at = parts.findIndex((p) => VCS_DIRS.has(p));
  return at === -1 ? null : parts.slice(0, at + 1).join('/');
}

function ancestors(rel: string): string[] {
  const out: string[] = [];
  for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) out.push(rel.slice(0, i));
  return out;
}

function claimOf(rel: string, claimed: readonly string[]): string | undefined {
  return claimed.find((c) => rel === c || rel.startsWith(`${c}/`) || c.startsWith(`${rel}/`));
}

/**
 * Intersects git's two answers and groups the result. A folder is copied whole when every
 * untracked file in it is selected, no tracked file is in it, and it holds no VCS metadata or
 * nested repository, so copying it brings exactly git's answer (plus empty folders, which git
 * does not list). Pure.
 */
export function selectIncluded(lists: IncludeLists): IncludeSelection {
  const ignored = new Set(lists.ignored);
  const excluded = new Map<string, IncludeSelection['excluded'][number]>();
  const exclude = (path: string, why: IncludeSelection['excluded'][number]['why'], claimedBy?: string): void => {
    const had = excluded.get(path);
    if (had) had.files++;
    else excluded.set(path, { path, why, files: 1, ...(claimedBy !== undefined ? { claimedBy } : {}) });
  };
  const selected = new Set<string>();
  const notIgnored: string[] = [];
  for (const raw of lists.matching) {
    if (!ignored.has(raw)) {
      if (!raw.endsWith('/')) notIgnored.push(raw);
      continue;
    }
    const rel = raw.replace(/\/$/, '');
    const vcs = vcsMetadataOf(rel);
    const claim = claimOf(rel, lists.claimed);
    if (raw.endsWith('/')) exclude(rel, 'nested-repository');
    else if (vcs !== null) exclude(vcs, 'vcs-metadata');
    else if (claim !== undefined) exclude(claim, 'claimed', claim);
    else selected.add(rel);
  }
  // A folder is impure when anything in it is not selected: a tracked file, an untracked file
  // left out (not matched, not ignored, or excluded above), or a nested repository.
  const impure = new Set<string>();
  const taint = (rel: string): void => {
    for (const dir of ancestors(rel)) impure.add(dir);
  };
  for (const rel of lists.tracked) taint(rel);
  for (const raw of [...lists.ignored, ...lists.unignored]) {
    const rel = raw.replace(/\/$/, '');
    if (!selected.has(rel)) {
      taint(rel);
      if (raw.endsWith('/')) impure.add(rel);
    }
  }
  for (const c of lists.claimed) {
    taint(c);
    impure.add(c);
  }
  const paths = new Set<string>();
  for (const rel of selected) {
    const top = ancestors(rel).find((dir) => !impure.has(dir));
    paths.add(top ?? rel);
  }
  return {
    paths: [...paths].sort(),
    excluded: [...excluded.values()].sort((a, b) => a.path.localeCompare(b.path)),
    files: selected.size,
    notIgnored: notIgnored.sort(),
  };
}
