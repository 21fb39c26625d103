import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { containerPlace, gitOverlayOf } from '../src/run/container/task-container.js';
import { unavailable } from './helpers/capabilities.js';
import { makeRepo, type TestRepo } from './helpers/repo.js';

/**
 * Commits an agent makes inside its container (src/run/container/container-git.ts): the common
 * git directory is an overlay there, so git writes into the task's own upper folder and never
 * into the host repository; warren takes the branch's new commits after each run, through a
 * quarantine (src/git/quarantine.ts).
 */
const noPodman = unavailable(import.meta.filename, 'podman');

function podman(...args: string[]): { code: number; out: string } {
  const r = spawnSync('podman', args, { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`.trim() };
}

function projectOf(repo: TestRepo): string {
  return fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
}

async function containerTask(): Promise<{ repo: TestRepo; ws: string; branch: string; name: string }> {
  const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: container\n' } });
  const made = await repo.warrenJson<{ path: string; branch: string }>('new', 'feat', 'a');
  expect(made.code, made.stderr).toBe(0);
  const { name } = containerPlace(repo.home, projectOf(repo), 'a');
  onTestFinished(() => {
    podman('rm', '-f', '-t', '0', '--ignore', name);
  });
  // The container is made at the task's first command.
  const first = await repo.warren('exec', 'a', '--', 'true');
  expect(first.code, first.stderr).toBe(0);
  return { repo, ws: made.json.path, branch: made.json.branch, name };
}

const COMMIT = 'git -c user.name=Agent -c user.email=agent@example.invalid commit -q';

/** What an agent does inside, run straight through podman: as if warren were killed before it took the commits. */
function insideBehindWarrensBack(name: string, ws: string, script: string): void {
  const r = podman('exec', '-w', ws, name, 'sh', '-c', script);
  expect(r.code, r.out).toBe(0);
}

describe.skipIf(noPodman !== null)('commits inside a container task', () => {
  it(
    "are taken onto the task's branch; what git wrote inside (config, a hook) never reaches the host repository",
    { timeout: 240_000 },
    async () => {
      const { repo, ws, branch } = await containerTask();
      const hooksBefore = fs.readdirSync(path.join(repo.root, '.git', 'hooks')).sort();
      const configBefore = fs.readFileSync(path.join(repo.root, '.git', 'config'), 'utf8');
      const before = repo.git('rev-parse', branch);
      const r = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        [
          'echo one > one.txt',
          'git add one.txt',
          `${COMMIT} -m "made inside"`,
          // What husky's install does, and a hook of the agent's own: both in the shared git directory.
          'git config core.hooksPath .husky/_',
          'printf "#!/bin/sh\\nexit 0\\n" > "$(git rev-parse --git-common-dir)/hooks/pre-commit"',
        ].join(' && '),
      );
      expect(r.code, r.stderr).toBe(0);
      // On the branch, on the host, with the agent's own message.
      expect(repo.git('log', '-1', '--format=%s', branch)).toBe('made inside');
      expect(repo.git('rev-parse', `${branch}^`)).toBe(before);
      expect(repo.git('show', `${branch}:one.txt`)).toBe('one');
      // The host repository's config and hooks are as they were.
      expect(fs.readFileSync(path.join(repo.root, '.git', 'config'), 'utf8')).toBe(configBefore);
      expect(fs.readdirSync(path.join(repo.root, '.git', 'hooks')).sort()).toEqual(hooksBefore);
      const show = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a');
      expect(show.json.events.map((e) => e.kind)).toContain('sandbox.container_commits');
      // The workspace is clean on the host: its index is the commit's.
      expect(repo.git('-C', ws, 'status', '--porcelain')).toBe('');

      // warren commits on the host; the container's next command sees the branch where it is.
      fs.writeFileSync(path.join(ws, 'two.txt'), 'two\n');
      const cp = await repo.warren('checkpoint', 'a', '-m', 'from the host');
      expect(cp.code, cp.stderr).toBe(0);
      const hostTip = repo.git('rev-parse', branch);
      const seen = await repo.warren('exec', 'a', '--', 'git', 'rev-parse', 'HEAD');
      expect(seen.stdout.trim()).toBe(hostTip);
      // And a commit inside builds on it.
      const again = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        `echo three > three.txt && git add three.txt && ${COMMIT} -m "inside again"`,
      );
      expect(again.code, again.stderr).toBe(0);
      expect(repo.git('log', '--format=%s', '-3', branch).split('\n')).toEqual([
        'inside again',
        'from the host',
        'made inside',
      ]);
    },
  );

  it(
    'that no longer descend from the branch are kept at refs/warren/container/ID, said, never lost',
    { timeout: 240_000 },
    async () => {
      const { repo, ws, branch, name } = await containerTask();
      const base = repo.git('rev-parse', branch);
      insideBehindWarrensBack(name, ws, `echo agent > agent.txt && git add agent.txt && ${COMMIT} -m "the agent's"`);
      // Meanwhile the branch moves on the host (a commit of the user's own on top of the same base).
      const tree = repo.git('rev-parse', `${base}^{tree}`);
      const mine = repo.git('commit-tree', tree, '-p', base, '-m', "the user's");
      repo.git('update-ref', `refs/heads/${branch}`, mine, base);
      const r = await repo.warren('exec', 'a', '--', 'true');
      expect(r.code, r.stderr).toBe(0);
      expect(repo.git('rev-parse', branch)).toBe(mine);
      expect(repo.git('log', '-1', '--format=%s', 'refs/warren/container/a')).toBe("the agent's");
      const show = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'a');
      const kept = show.json.events.find((e) => e.kind === 'sandbox.container_commits_kept');
      expect(kept?.message).toContain('refs/warren/container/a');
      expect(kept?.message).toContain('nothing was lost');
    },
  );

  it(
    'rm takes the commits no run took before its guards read the task: they count as its work',
    { timeout: 240_000 },
    async () => {
      const { repo, ws, branch, name } = await containerTask();
      insideBehindWarrensBack(name, ws, `echo late > late.txt && git add late.txt && ${COMMIT} -m "not yet taken"`);
      const rm = await repo.warren('rm', 'a', '--delete-branch');
      expect(rm.code).not.toBe(0);
      // Refused as a branch with work on no other ref, named; not as uncommitted changes (they were committed, inside).
      expect(rm.stderr).toContain('not yet taken');
      expect(rm.stderr).not.toContain('uncommitted');
      expect(fs.existsSync(ws)).toBe(true);
      // Removed keeping the branch: the commit is on it, the container and its folders are gone.
      const kept = await repo.warren('rm', 'a');
      expect(kept.code, kept.stderr).toBe(0);
      expect(repo.git('log', '-1', '--format=%s', branch)).toBe('not yet taken');
      expect(podman('container', 'exists', name).code).not.toBe(0);
      expect(fs.existsSync(containerPlace(repo.home, projectOf(repo), 'a').dir)).toBe(false);
    },
  );

  it(
    "takes objects only: a link in the upper folder to another repository's objects is never read",
    { timeout: 240_000 },
    async () => {
      const { repo, branch, name } = await containerTask();
      // Another repository on the host, with a commit the agent must not be able to bring in.
      const other = makeRepo({ files: { 'secret.txt': "not the agent's\n" } });
      other.git('gc', '-q');
      const secret = other.git('rev-parse', 'HEAD');
      expect(podman('stop', '-t', '0', name).code).toBe(0);
      const { upper } = gitOverlayOf(repo.home, projectOf(repo), 'a');
      fs.mkdirSync(path.join(upper, 'objects'), { recursive: true });
      fs.rmSync(path.join(upper, 'objects', 'pack'), { recursive: true, force: true });
      fs.symlinkSync(path.join(other.root, '.git', 'objects', 'pack'), path.join(upper, 'objects', 'pack'));
      fs.mkdirSync(path.join(upper, 'refs', 'heads', ...branch.split('/').slice(0, -1)), { recursive: true });
      fs.writeFileSync(path.join(upper, 'refs', 'heads', ...branch.split('/')), `${secret}\n`);
      const before = repo.git('rev-parse', branch);
      await repo.warren('exec', 'a', '--', 'true');
      expect(repo.git('rev-parse', branch)).toBe(before);
      expect(spawnSync('git', ['-C', repo.root, 'cat-file', '-e', secret]).status).not.toBe(0);
      const show = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'a');
      expect(show.json.events.map((e) => e.kind)).toContain('sandbox.container_commits_refused');
    },
  );
});
