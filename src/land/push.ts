import { WarrenError } from '../errors.js';
import { configValue } from '../git/config.js';
import { pushCommit, remoteNames } from '../git/remote.js';
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
    const upstream = await configValue(ctx.repo.root, `branch.${base}.remote`);
    remote = upstream !== null && upstream !== '.' ? upstream : 'origin';
  }
  if (remote === '' || remote.startsWith('-') || remote.includes('\0')) {
    throw new WarrenError('USAGE', `remote ${JSON.stringify(remote)} is not a valid remote name; nothing was changed.`);
  }
  if (!(await remoteNames(ctx.repo)).includes(remote)) {
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
export async function pushRef(
  ctx: ProjectContext,
  remote: string,
  commit: string,
  ref: string,
  expected?: string,
): Promise<PushOutcome> {
  const pushed = await pushCommit(ctx.repo, remote, commit, ref, expected);
  return pushed.ok
    ? { remote, ref, commit, ok: true }
    : { remote, ref, commit, ok: false, error: pushed.error ?? 'push failed' };
}
