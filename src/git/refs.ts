import { git, gitError, type Where } from './exec.js';
import { isTransientGitFailure } from './errors.js';
import { askAboutObjects } from './object-answers.js';
import { parseBatchCheckIds, splitLines } from './parse.js';
import type { Repository } from './repo.js';

/** Refs and revisions: resolving them, reading branches, moving refs by compare-and-swap. */

/** A revision as a commit id, or null when it does not name a commit. `--end-of-options`: a name is never an option. */
export async function revParse(repo: Repository, rev: string): Promise<string | null> {
  // A full id names the same commit for good once it is there; a name that moves is asked each time.
  const result = await askAboutObjects(
    repo,
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`],
    {
      ids: [rev],
      allowFailure: true,
    },
  );
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * What `revParse` says of each of `revs`, read together by one `cat-file --batch-check` (which
 * resolves and peels each name as `rev-parse --verify` does): a name that moves is read once,
 * with the others, where one `rev-parse` a name was a process each.
 */
export async function revParseMany<const T extends readonly string[]>(
  repo: Repository,
  revs: T,
): Promise<{ [K in keyof T]: string | null }> {
  // One line a question: a name holding a line break (no ref can) is asked alone.
  const answers =
    revs.length < 2 || revs.some((r) => /[\n\r\0]/.test(r))
      ? await Promise.all(revs.map((r) => revParse(repo, r)))
      : parseBatchCheckIds(
          (
            await git(['cat-file', '--batch-check=%(objectname)'], {
              cwd: repo.root,
              input: revs.map((r) => `${r}^{commit}\n`).join(''),
            })
          ).stdout,
          revs.length,
        );
  return answers as { [K in keyof T]: string | null };
}

/** The commit `rev` names, read in `cwd` (a worktree's own HEAD), or null. */
export async function commitAt(cwd: string, rev: string): Promise<string | null> {
  const result = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    cwd,
    allowFailure: true,
  });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/** The tree of a commit. */
export async function treeOf(repo: Repository, commit: string): Promise<string> {
  return (
    await askAboutObjects(repo, ['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], { ids: [commit] })
  ).stdout.trim();
}

export async function currentBranch(worktree: string): Promise<string | null> {
  const result = await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: worktree, allowFailure: true });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

export async function branchExists(repo: Repository, branch: string): Promise<boolean> {
  const result = await git(['show-ref', '--verify', '--quiet', '--', `refs/heads/${branch}`], {
    cwd: repo.root,
    allowFailure: true,
  });
  return result.exitCode === 0;
}

export interface Upstream {
  remote: string;
  /** The branch's name on the remote (`refs/heads/main`). */
  remoteRef: string;
  /** The local remote-tracking ref (`refs/remotes/origin/main`). */
  trackingRef: string;
}

export interface BranchFacts {
  commit: string;
  /** Null when the branch tracks nothing, or tracks a local branch (`remote = .`). */
  upstream: Upstream | null;
}

const FACTS_FORMAT =
  '%(refname)%00%(objectname)%00%(objecttype)%00%(upstream:remotename)%00%(upstream:remoteref)%00%(upstream)';

/**
 * Several local branches in one `for-each-ref`: each one's commit and upstream; a branch that
 * does not exist (or points at something other than a commit) is absent from the map.
 *
 * Callers in one process share calls (twenty `createTask`s at once, through the library or
 * `warren serve`, each need their base and new branch): while a `for-each-ref` of a repository
 * runs, what is asked of it meanwhile waits and is read by one more call, started after every
 * one of those asked — so each answer is still read after its question, and a lone caller
 * waits for nothing.
 */
export async function branchFacts(repo: Repository, branches: readonly string[]): Promise<Map<string, BranchFacts>> {
  if (branches.length === 0) return new Map();
  let reads = readsOf.get(repo.commonDir);
  if (!reads) readsOf.set(repo.commonDir, (reads = new BranchReads(repo, () => readsOf.delete(repo.commonDir))));
  const all = await reads.ask(branches);
  const facts = new Map<string, BranchFacts>();
  for (const b of branches) {
    const f = all.get(b);
    if (f) facts.set(b, f);
  }
  return facts;
}

const readsOf = new Map<string, BranchReads>();

/** One repository's `for-each-ref` calls: at most one running, and one gathering what is asked meanwhile. */
class BranchReads {
  private running: Promise<void> | null = null;
  private waiting: { branches: Set<string>; answer: Promise<Map<string, BranchFacts>> } | null = null;

  constructor(
    private readonly repo: Repository,
    private readonly onIdle: () => void,
  ) {}

  ask(branches: readonly string[]): Promise<Map<string, BranchFacts>> {
    if (this.running === null) {
      const answer = readBranchFacts(this.repo.root, branches);
      this.running = answer.then(
        () => this.next(),
        () => this.next(),
      );
      return answer;
    }
    if (this.waiting === null) {
      const gathered = new Set<string>();
      // Starts when the running call has ended (after next() has made it the running one).
      this.waiting = {
        branches: gathered,
        answer: this.running.then(() => readBranchFacts(this.repo.root, [...gathered])),
      };
    }
    for (const b of branches) this.waiting.branches.add(b);
    return this.waiting.answer;
  }

  private next(): void {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting === null) {
      this.running = null;
      this.onIdle();
      return;
    }
    this.running = waiting.answer.then(
      () => this.next(),
      () => this.next(),
    );
  }
}

async function readBranchFacts(cwd: string, branches: readonly string[]): Promise<Map<string, BranchFacts>> {
  const facts = new Map<string, BranchFacts>();
  const refs = branches.map((b) => `refs/heads/${b}`);
  // Patterns match whole path components, so `refs/heads/a` also lists `refs/heads/a/b`: only exact names count.
  const result = await git(['for-each-ref', `--format=${FACTS_FORMAT}`, '--', ...refs], { cwd });
  for (const line of splitLines(result.stdout)) {
    const [ref, commit, type, remote, remoteRef, trackingRef] = line.split('\0');
    if (!ref || !commit || type !== 'commit' || !refs.includes(ref)) continue;
    const upstream = remote && remoteRef && trackingRef && remote !== '.' ? { remote, remoteRef, trackingRef } : null;
    facts.set(ref.slice('refs/heads/'.length), { commit, upstream });
  }
  return facts;
}

/** Every ref's object id except the named ones: where else a branch's work may already be. */
export async function otherRefTips(repo: Repository, exclude: readonly string[]): Promise<string[]> {
  const result = await git(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(*objectname)'], {
    cwd: repo.root,
  });
  const tips = new Set<string>();
  for (const line of splitLines(result.stdout)) {
    const [name, object, peeled] = line.split('\0');
    if (!name || exclude.includes(name)) continue;
    // A tag's own object is not a commit; its peeled target is.
    tips.add(peeled || object || '');
  }
  tips.delete('');
  return [...tips];
}

/**
 * Moves `ref` to `to` only if it is still at `from` (compare-and-swap). False when it moved
 * meanwhile (or git could not lock it); throws on anything else.
 */
export async function compareAndSwapRef(
  repo: Repository,
  ref: string,
  to: string,
  from: string,
  reason: string,
): Promise<boolean> {
  const result = await git(['update-ref', '-m', reason, '--', ref, to, from], { cwd: repo.root, allowFailure: true });
  if (result.exitCode === 0) return true;
  if (/cannot lock ref|is at .* but expected|Unable to create .*\.lock/i.test(result.stderr)) return false;
  throw gitError(result);
}

/** Deletes a local branch outright (`-D`): callers check first that its work is elsewhere. */
export async function deleteBranch(repo: Repository, branch: string): Promise<void> {
  await git(['branch', '-D', '--', branch], { cwd: repo.root });
}

/** Deletes a branch if it exists; true when it did. */
export async function deleteBranchIfExists(repo: Repository, branch: string): Promise<boolean> {
  if (!(await branchExists(repo, branch))) return false;
  const result = await git(['branch', '-D', '--', branch], { cwd: repo.root, allowFailure: true });
  return result.exitCode === 0;
}

/** Runs a mutating git command once more when another git process held a lock or was mid-write. */
export async function gitRetrying(args: readonly string[], cwd: Where, attempts = 4, input?: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const result = await git(args, { cwd, allowFailure: true, ...(input === undefined ? {} : { input }) });
    if (result.exitCode === 0) return;
    if (attempt >= attempts || !isTransientGitFailure(result.stderr)) throw gitError(result);
    await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 50));
  }
}

/** A ref under a prefix, with its commit's parents and message (for refs warren writes itself, e.g. archives). */
export interface RefCommit {
  ref: string;
  commit: string;
  parents: string[];
  message: string;
}

/** Every ref under `prefix` (`refs/warren/archive/`) that points at a commit, sorted by name. */
export async function refsUnder(repo: Repository, prefix: string): Promise<RefCommit[]> {
  // Records end in NUL NUL (a message holds neither); for-each-ref adds a newline after each.
  const result = await git(
    [
      'for-each-ref',
      '--sort=refname',
      '--format=%(refname)%00%(objectname)%00%(objecttype)%00%(parent)%00%(contents)%00%00',
      '--',
      prefix,
    ],
    { cwd: repo.root },
  );
  const out: RefCommit[] = [];
  for (const record of result.stdout.split('\0\0\n')) {
    const [ref, commit, type, parents, message] = record.split('\0');
    if (!ref || !commit || type !== 'commit') continue;
    out.push({ ref, commit, parents: (parents ?? '').split(' ').filter(Boolean), message: message ?? '' });
  }
  return out;
}

/** Makes `ref` point at `commit` only if it does not exist yet. False when it does. */
export async function createRef(repo: Repository, ref: string, commit: string, reason: string): Promise<boolean> {
  return compareAndSwapRef(repo, ref, commit, '0'.repeat(40), reason);
}

/** Deletes `ref` if it still points at `expected`; false when it moved or is gone. */
export async function deleteRefAt(repo: Repository, ref: string, expected: string): Promise<boolean> {
  const result = await git(['update-ref', '-d', '--', ref, expected], { cwd: repo.root, allowFailure: true });
  return result.exitCode === 0;
}

/** Points `ref` at `commit`, whatever it pointed at (a ref of warren's own, not a branch). */
export async function setRef(repo: Repository, ref: string, commit: string, reason: string): Promise<void> {
  await git(['update-ref', '-m', reason, '--', ref, commit], { cwd: repo.root });
}
