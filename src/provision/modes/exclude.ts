import fs from 'node:fs';
import path from 'node:path';
import type { ProjectContext } from '../../workspace/context.js';
import { withRepoLock } from '../../workspace/locks.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { checkIgnored } from '../../git/status.js';
import { pinned } from '../../workspace/pinned.js';

/**
 * Keeps every provisioned path out of the workspace's `git status`. Most already are: the
 * path is ignored in the main checkout and the workspace has the same .gitignore. Two cases
 * are not: a `share` symlink where .gitignore says `node_modules/` (a trailing slash matches
 * directories only, and a symlink is not one), and a base branch whose .gitignore differs.
 *
 * Linked worktrees have no exclude file of their own: git reads `$GIT_COMMON_DIR/info/exclude`
 * in every worktree (per-worktree `core.excludesFile` would need extensions.worktreeConfig,
 * which changes the repository format for every tool). So warren adds the exact, anchored
 * path (`/node_modules`) to the common exclude, in its own marked block. That is safe for the
 * main checkout and every other workspace: only paths git already ignores in the main
 * checkout are provisioned, so the line only widens "the directory is ignored" to "whatever
 * sits at that exact path is ignored". Lines stay while any task of the project needs them.
 */

const BEGIN = '# >>> warren: provisioned paths (managed by warren; kept while a workspace needs them)';
const END = '# <<< warren';

function excludeFile(ctx: ProjectContext): string {
  return path.join(ctx.repo.commonDir, 'info', 'exclude');
}

/** gitignore escaping for one literal path. Pure. */
export function literalPattern(rel: string): string {
  return `/${rel.replace(/([\\*?[\]!#])/g, '\\$1').replace(/ $/, '\\ ')}`;
}

/** Splits the exclude file into the user's text and warren's own lines. Pure. */
export function splitBlock(text: string): { outside: string[]; ours: string[] } {
  const outside: string[] = [];
  const ours: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    if (line === BEGIN) inside = true;
    else if (line === END) inside = false;
    else (inside ? ours : outside).push(line);
  }
  while (outside.length > 0 && outside[outside.length - 1] === '') outside.pop();
  return { outside, ours };
}

export function joinBlock(outside: readonly string[], ours: readonly string[]): string {
  const head = outside.length > 0 ? `${outside.join('\n')}\n` : '';
  return ours.length === 0 ? head : `${head}${BEGIN}\n${[...new Set(ours)].sort().join('\n')}\n${END}\n`;
}

async function rewrite(ctx: ProjectContext, change: (ours: string[]) => string[]): Promise<void> {
  await withRepoLock(ctx, 'info/exclude', async () => {
    const file = excludeFile(ctx);
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const { outside, ours } = splitBlock(current);
    const next = joinBlock(outside, change(ours));
    if (next !== current) writeFileAtomic(file, next);
  });
}

/** Returns the paths that needed an exclude line. */
export async function keepOutOfStatus(ctx: ProjectContext, wsPath: string, rels: readonly string[]): Promise<string[]> {
  const file = excludeFile(ctx);
  const { ours } = splitBlock(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
  const unsure = rels.filter(
    (rel) => !ignoredAsInMain(ctx.repo.root, wsPath, rel) && !excludedByOurLine(ours, ctx.repo.root, wsPath, rel),
  );
  const ignored = await checkIgnored(await pinned(ctx, wsPath), unsure);
  const missing = unsure.filter((r) => !ignored.has(r));
  if (missing.length === 0) return [];
  await rewrite(ctx, (ours) => [...ours, ...missing.map(literalPattern)]);
  return missing;
}

/**
 * True when git is sure to ignore `rel` in the workspace because it ignores it in the main
 * checkout (every provisioned path is checked there first). What git decides from differs
 * between the two checkouts only in the `.gitignore` files above the path and in the path's
 * own kind (a dir-only pattern does not match a symlink); info/exclude and core.excludesFile
 * are shared. When those read the same, git need not be asked again. Pure reads.
 */
export function ignoredAsInMain(mainRoot: string, wsPath: string, rel: string): boolean {
  if (kindOf(path.join(mainRoot, rel)) !== kindOf(path.join(wsPath, rel))) return false;
  return sameIgnoreFilesAbove(mainRoot, wsPath, rel);
}

/**
 * True when warren's own line for `rel` already stands in the exclude block and the .gitignore
 * files above it read the same in both checkouts: a `share` symlink, which a dir-only pattern
 * (`node_modules/`) does not ignore, is ignored by that line in every workspace after the first,
 * so git need not be asked again (issue 41: a process on the path of every `share` task). A
 * .gitignore could still keep it in git's view only by a pattern that matches the workspace's
 * kind of entry and not the main checkout's (`!node_modules` before `node_modules/`); .gitignore
 * outranks info/exclude, so no exclude line could undo that, and asking would change nothing.
 * Pure reads.
 */
export function excludedByOurLine(ours: readonly string[], mainRoot: string, wsPath: string, rel: string): boolean {
  if (!ours.includes(literalPattern(rel))) return false;
  if (kindOf(path.join(mainRoot, rel)) === null || kindOf(path.join(wsPath, rel)) === null) return false;
  return sameIgnoreFilesAbove(mainRoot, wsPath, rel);
}

/** Do the .gitignore files above `rel` (and the folders holding them) read the same in both checkouts? */
function sameIgnoreFilesAbove(mainRoot: string, wsPath: string, rel: string): boolean {
  const parts = rel.split('/');
  for (let depth = 0; depth < parts.length; depth++) {
    const dir = parts.slice(0, depth).join('/');
    if (depth > 0 && (kindOf(path.join(mainRoot, dir)) !== 'dir' || kindOf(path.join(wsPath, dir)) !== 'dir'))
      return false;
    const a = readIgnoreFile(path.join(mainRoot, dir, '.gitignore'));
    const b = readIgnoreFile(path.join(wsPath, dir, '.gitignore'));
    if (a === undefined || b === undefined || a !== b) return false;
  }
  return true;
}

function kindOf(p: string): 'dir' | 'file' | 'link' | 'other' | null {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (!st) return null;
  return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
}

/** A .gitignore's text, '' when there is none, undefined when it is not a plain file (git's own rules then decide). */
function readIgnoreFile(p: string): string | undefined {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (!st) return '';
  return st.isFile() ? fs.readFileSync(p, 'utf8') : undefined;
}

/** Drops warren's lines that no remaining task needs. */
export async function pruneExcludes(ctx: ProjectContext, stillNeeded: readonly string[]): Promise<void> {
  const keep = new Set(stillNeeded.map(literalPattern));
  await rewrite(ctx, (ours) => ours.filter((line) => (line.trim() === '' ? false : keep.has(line))));
}
