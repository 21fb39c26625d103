import fs from 'node:fs';
import path from 'node:path';
import { folderOf, git, type GitResult } from './exec.js';
import type { Where } from './exec.js';
import { splitZ } from './parse.js';
import { gitRetrying } from './refs.js';

/** A worktree's own index and files: staging, committing, and bringing a checkout forward. */

/** `git add -A` of everything, with pathspecs left out; retried when another git held the lock. */
export async function stageAll(worktree: Where, excludePathspecs: readonly string[]): Promise<void> {
  await gitRetrying(['add', '-A', '--', '.', ...excludePathspecs], worktree);
}

/** What is staged, by name. */
export async function stagedNames(worktree: Where): Promise<string[]> {
  return splitZ((await git(['diff', '--cached', '--name-only', '-z', '--no-renames'], { cwd: worktree })).stdout);
}

/** Puts paths back to HEAD's version in the index (not the files). */
export async function unstage(worktree: Where, paths: readonly string[]): Promise<void> {
  await gitRetrying(['reset', '-q', 'HEAD', '--', ...paths.map((p) => `:(literal)${p}`)], worktree);
}

export async function hasStagedChanges(worktree: Where): Promise<boolean> {
  const result = await git(['diff', '--cached', '--quiet'], { cwd: worktree, allowFailure: true });
  return result.exitCode !== 0;
}

/**
 * `git commit` of what is staged, as `author` (the identity and date the commit hooks were
 * given); the result, failed or not. In a pinned workspace git runs no hook (src/git/exec.ts):
 * `checkpoint` ran them before, and runs post-commit after.
 */
export function commitStaged(worktree: Where, message: string, author: Record<string, string>): Promise<GitResult> {
  return git(['commit', '-q', '--no-verify', '-F', '-'], {
    cwd: worktree,
    input: message,
    allowFailure: true,
    env: author,
  });
}

/**
 * `GIT_AUTHOR_NAME`, `GIT_AUTHOR_EMAIL` and `GIT_AUTHOR_DATE` (`@SECONDS ±ZONE`) as git exports
 * them to a commit's hooks, from `git var GIT_AUTHOR_IDENT` (which honours the same variables).
 */
export async function authorEnv(worktree: Where): Promise<Record<string, string>> {
  const ident = (await git(['var', 'GIT_AUTHOR_IDENT'], { cwd: worktree })).stdout.trim();
  const m = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(ident);
  if (!m) throw new Error(`git var GIT_AUTHOR_IDENT said ${JSON.stringify(ident)}: not NAME <EMAIL> SECONDS ZONE`);
  return { GIT_AUTHOR_NAME: m[1] ?? '', GIT_AUTHOR_EMAIL: m[2] ?? '', GIT_AUTHOR_DATE: `@${m[3]} ${m[4]}` };
}

/**
 * `git --exec-path`: where git's own programs are, as git exports it (`GIT_EXEC_PATH`) to its
 * hooks. Asked once per process for each git PATH finds (and GIT_EXEC_PATH, which overrides it):
 * every checkpoint needs it.
 */
export function gitExecPath(): Promise<string> {
  const key = `${process.env.PATH ?? ''}\0${process.env.GIT_EXEC_PATH ?? ''}`;
  let known = execPaths.get(key);
  if (!known) {
    known = git(['--exec-path'], { cwd: '/' }).then((r) => r.stdout.trim());
    known.catch(() => execPaths.delete(key));
    execPaths.set(key, known);
  }
  return known;
}

const execPaths = new Map<string, Promise<string>>();

/** The commit a worktree's HEAD points at. */
export async function headOf(worktree: Where): Promise<string> {
  return (await git(['rev-parse', '--verify', 'HEAD'], { cwd: worktree })).stdout.trim();
}

/** The commit at a worktree's HEAD, or null when it has none (or the worktree cannot be read). */
export async function headOrNull(worktree: Where): Promise<string | null> {
  const result = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: worktree, allowFailure: true });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * Brings a checkout from commit `from` to `to`: its index and files follow (`read-tree -m -u`),
 * and git refuses before writing anything if local changes would be overwritten. The stat
 * data is refreshed first, so a file merely touched does not count as changed.
 */
export async function moveCheckout(worktree: Where, from: string, to: string): Promise<GitResult> {
  await git(['update-index', '-q', '--refresh'], { cwd: worktree, allowFailure: true });
  return git(['read-tree', '-m', '-u', '--end-of-options', from, to], { cwd: worktree, allowFailure: true });
}

/**
 * After a `moveCheckout(from → to)` cut off before it finished (warren killed while git wrote
 * the files): waits for git's `index.lock` to go (a git left running finishes its write), then
 * says where the move got to. `index`: git wrote the index too, so the checkout holds `to`.
 * `files`: the index still holds `from`, and each file the move had written — its content is
 * exactly `to`'s, or it is gone where `to` deletes it — is put back to the index's version (a
 * file `to` adds is deleted); a file with any other content is someone's edit, left as it is.
 */
export async function settleInterruptedMove(
  worktree: Where,
  from: string,
  to: string,
): Promise<{ got: 'index' } | { got: 'files'; putBack: string[] }> {
  const lock = path.join(
    folderOf(worktree),
    (await git(['rev-parse', '--git-path', 'index.lock'], { cwd: worktree })).stdout.trim(),
  );
  for (let waited = 0; fs.existsSync(lock); waited += 100) {
    if (waited >= INDEX_LOCK_WAIT_MS)
      throw new Error(
        `${lock} is still there ${INDEX_LOCK_WAIT_MS / 1000} s on: a git is still working in ${folderOf(worktree)}, or one was killed there; if no git runs there, delete it and run any warren command`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  const changes = splitZ(
    (await git(['diff', '--name-status', '-z', '--no-renames', '--end-of-options', from, to], { cwd: worktree }))
      .stdout,
  );
  const moves: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < changes.length; i += 2) moves.push({ status: changes[i] ?? '', path: changes[i + 1] ?? '' });
  if (
    await indexMatches(
      worktree,
      to,
      moves.map((m) => m.path),
    )
  )
    return { got: 'index' };
  const root = folderOf(worktree);
  const toBlobs = new Map<string, string>();
  const listed = moves.filter((m) => m.status !== 'D').map((m) => `:(literal)${m.path}`);
  if (listed.length > 0) {
    const out = (await git(['ls-tree', '-r', '-z', '--end-of-options', to, '--', ...listed], { cwd: worktree })).stdout;
    for (const entry of splitZ(out)) {
      const match = /^\d+ \w+ ([0-9a-f]+)\t(.*)$/s.exec(entry);
      if (match?.[1] && match[2] !== undefined) toBlobs.set(match[2], match[1]);
    }
  }
  const putBack: string[] = [];
  for (const m of moves) {
    const file = path.join(root, m.path);
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    const written =
      m.status === 'D'
        ? st === undefined
        : st !== undefined &&
          (st.isFile() || st.isSymbolicLink()) &&
          (await blobOf(worktree, file, st.isSymbolicLink())) === toBlobs.get(m.path);
    if (!written) continue;
    if (m.status === 'A') fs.rmSync(file, { force: true });
    else await git(['checkout-index', '-f', '--', m.path], { cwd: worktree }); // paths are literal here
    putBack.push(m.path);
  }
  return { got: 'files', putBack };
}

const INDEX_LOCK_WAIT_MS = 10_000;

/** The blob id git would give `file` (a link: its target, as git stores it). */
async function blobOf(worktree: Where, file: string, link: boolean): Promise<string> {
  const args = link ? ['hash-object', '--stdin'] : ['hash-object', '--', file];
  const result = await git(args, { cwd: worktree, ...(link ? { input: fs.readlinkSync(file) } : {}) });
  return result.stdout.trim();
}

/** True when the checkout's index holds `commit`'s version of every one of `paths`. */
export async function indexMatches(worktree: Where, commit: string, paths: readonly string[]): Promise<boolean> {
  if (paths.length === 0) return true;
  const result = await git(
    ['diff-index', '--cached', '--quiet', '--end-of-options', commit, '--', ...paths.map((p) => `:(literal)${p}`)],
    { cwd: worktree, allowFailure: true },
  );
  return result.exitCode === 0;
}

/** `git merge --ff-only` in a worktree; the result, failed or not. */
export function fastForward(worktree: Where, commit: string): Promise<GitResult> {
  return git(['merge', '--ff-only', '--quiet', '--end-of-options', commit], { cwd: worktree, allowFailure: true });
}

/** Puts the whole index back to HEAD (`git reset -q`): what was staged is unstaged, no file changes. */
export async function unstageAll(worktree: Where): Promise<void> {
  await gitRetrying(['reset', '-q'], worktree);
}

/** The number of entries in a git index file (its header), or null when it cannot be read. */
export function indexEntryCount(indexFile: string): number | null {
  let fd: number | null = null;
  try {
    fd = fs.openSync(indexFile, 'r');
    const header = Buffer.alloc(12);
    if (fs.readSync(fd, header, 0, 12, 0) !== 12 || header.toString('latin1', 0, 4) !== 'DIRC') return null;
    return header.readUInt32BE(8);
  } catch {
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Fills a worktree made with `--no-checkout`: its index and files at HEAD, as `git worktree add` itself does it. */
export function checkoutEmptyWorktree(worktree: Where): Promise<GitResult> {
  return git(['reset', '--hard', '--no-recurse-submodules', '--quiet'], {
    cwd: worktree,
    timeoutMs: 30 * 60_000,
    allowFailure: true,
  });
}
