import { WarrenError } from '../errors.js';
import { git } from '../git/exec.js';
import type { ProjectContext } from '../workspace/context.js';

export interface PushOutcome {
  remote: string;
  ref: string;
  commit: string;
  ok: boolean;
  error?: string;
}

/** The remote to push to: the one named, else the base branch's upstream remote, else `origin`. Checked before anything moves. */
export async function resolveRemote(ctx: ProjectContext, named: string | true, base: string): Promise<string> {
  let remote = typeof named === 'string' ? named : null;
  if (remote === null) {
    const upstream = await git(['config', '--get', `branch.${base}.remote`], { cwd: ctx.repo.root, allowFailure: true });
    remote = upstream.exitCode === 0 && upstream.stdout.trim() !== '.' ? upstream.stdout.trim() : 'origin';
  }
  if (remote === '' || remote.startsWith('-') || remote.includes('\0')) {
    throw new WarrenError('USAGE', `remote ${JSON.stringify(remote)} is not a valid remote name; nothing was changed.`);
  }
  const known = await git(['remote'], { cwd: ctx.repo.root });
  if (!known.stdout.split('\n').includes(remote)) {
    throw new WarrenError('USAGE', `this repository has no remote ${JSON.stringify(remote)}; nothing was changed.`, {
      hint: 'See `git remote -v`, and pass --push REMOTE.',
    });
  }
  return remote;
}

/**
 * Pushes `commit` to `ref` on the remote. `expected` is a compare-and-swap on the remote: the
 * value it must still have (empty string: must not exist), so a push never clobbers commits
 * someone else put there.
 */
export async function pushRef(ctx: ProjectContext, remote: string, commit: string, ref: string, expected?: string): Promise<PushOutcome> {
  const args = ['push', '--porcelain', ...(expected === undefined ? [] : [`--force-with-lease=${ref}:${expected}`]), '--', remote, `${commit}:${ref}`];
  const result = await git(args, { cwd: ctx.repo.root, allowFailure: true, timeoutMs: 300_000 });
  if (result.exitCode === 0) return { remote, ref, commit, ok: true };
  const error = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-3).join(' | ');
  return { remote, ref, commit, ok: false, error };
}
