import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, runCli, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * A container task's container is made during `new` as soon as git recorded the worktree (its
 * folder, `.git` file and git directory: the binds' sources), while git checks the files out
 * (src/run/container/container-steps.ts). git on PATH is wrapped here so that the checkout warren
 * runs in the new workspace (`git reset --hard`) first waits until the task's container exists and
 * says so in a file; then it goes on, fails, or kills warren. With the checkout inside `git
 * worktree add` (the container made after it), warren runs no such checkout: nothing is said.
 */
const noPodman = unavailable(import.meta.filename, 'podman');

function podman(...args: string[]): { code: number; out: string } {
  const r = spawnSync('podman', args, { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`.trim() };
}

/** The containers podman has of this test's WARREN_HOME. */
function containersOf(repo: TestRepo): string[] {
  return podman('ps', '-a', '-q', '--filter', `label=warren.home=${repo.home}`).out.split('\n').filter(Boolean);
}

/** `then`: what the checkout does once the container exists (go on, fail, or kill warren). */
function wrappedGit(then: 'go-on' | 'fail' | 'kill'): { env: Record<string, string>; seen: string } {
  const dir = tmpDir('warren-git-wrap-');
  const git = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  const seen = path.join(dir, 'seen');
  // Bounded wait (60 s, for a loaded machine): on code that makes the container after the checkout, it never comes.
  fs.writeFileSync(
    path.join(dir, 'git'),
    `#!/bin/sh
case " $* " in *" reset --hard "*)
  i=0
  while [ $i -lt 600 ]; do
    if [ -n "$(podman ps -a -q --filter "label=warren.home=$WARREN_HOME" --filter label=warren.task=a)" ]; then
      echo "container made during the checkout" > ${seen}; break
    fi
    sleep 0.1; i=$((i+1))
  done
  case ${then} in fail) echo "checkout failed (test)" >&2; exit 1;; kill) kill -9 $PPID; exit 1;; esac;;
esac
exec ${git} "$@"
`,
    { mode: 0o755 },
  );
  return { env: { PATH: `${dir}:${process.env.PATH ?? ''}` }, seen };
}

describe.skipIf(noPodman !== null)('a container task at new', () => {
  it(
    'its container is made while git checks the files out, and sees the files checked out after it was made',
    { timeout: 180_000 },
    async () => {
      const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: container\n' } });
      onTestFinished(() => void containersOf(repo).forEach((id) => podman('rm', '-f', '-t', '0', id)));
      const { env, seen } = wrappedGit('go-on');
      const made = await runCli(['new', 'feat', 'a'], { cwd: repo.root, home: repo.home, env });
      expect(made.code, made.stderr).toBe(0);
      expect(fs.existsSync(seen) ? fs.readFileSync(seen, 'utf8') : 'nothing said').toBe(
        'container made during the checkout\n',
      );
      const read = await runCli(['exec', 'a', '--', 'cat', 'README.md'], { cwd: repo.root, home: repo.home });
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout).toBe('# main\n');
    },
  );

  it('a checkout that fails after the container was made undoes both', { timeout: 180_000 }, async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: container\n' } });
    onTestFinished(() => void containersOf(repo).forEach((id) => podman('rm', '-f', '-t', '0', id)));
    const { env, seen } = wrappedGit('fail');
    const made = await runCli(['new', 'feat', 'a'], { cwd: repo.root, home: repo.home, env });
    expect(fs.existsSync(seen)).toBe(true);
    expect(made.code).toBe(1);
    expect(made.stderr).toContain('checkout failed (test)');
    expect(containersOf(repo)).toEqual([]);
    expect(fs.readdirSync(path.join(repo.home, 'containers'))).toEqual([]);
    expect(repo.git('branch', '--list', 'feat/a')).toBe('');
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain('/a\n');
    // And the same `new` then succeeds.
    const again = await runCli(['new', 'feat', 'a'], { cwd: repo.root, home: repo.home });
    expect(again.code, again.stderr).toBe(0);
  });

  it(
    'warren killed in the checkout, its container made: the next command removes both, and new succeeds again',
    { timeout: 180_000 },
    async () => {
      const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: container\n' } });
      onTestFinished(() => void containersOf(repo).forEach((id) => podman('rm', '-f', '-t', '0', id)));
      const { env, seen } = wrappedGit('kill');
      const made = await runCli(['new', 'feat', 'a'], { cwd: repo.root, home: repo.home, env });
      expect(fs.existsSync(seen)).toBe(true);
      expect(made.code).not.toBe(0);
      const scan = await runCli(['--json', 'scan'], { cwd: repo.root, home: repo.home });
      expect(scan.code, scan.stderr).toBe(0);
      expect((JSON.parse(scan.stdout) as { strays: unknown[] }).strays).toEqual([]);
      expect(containersOf(repo)).toEqual([]);
      expect(fs.readdirSync(path.join(repo.home, 'containers'))).toEqual([]);
      const again = await runCli(['new', 'feat', 'a'], { cwd: repo.root, home: repo.home });
      expect(again.code, again.stderr).toBe(0);
      expect(containersOf(repo)).toHaveLength(1);
    },
  );
});
