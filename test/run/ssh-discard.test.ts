import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import type { TestRepo } from '../helpers/repo.js';
import { startSshHost, type SshHost } from '../helpers/ssh-host.js';

/**
 * `rm --discard` and `provision` of a task on another machine (`--runner ssh:box`: a second local
 * user behind sshd on 127.0.0.1): the discard archives the workspace there here, under the ref a
 * local discard uses, before the host removes it, and `restore` brings it back; a workspace that
 * cannot be brought here is not removed; `provision [--refresh]` runs on the host.
 */
const noSshd = unavailable(import.meta.filename, 'sshd');

let host: SshHost;

/** The coordinator's project on the host: its main checkout. */
const hostRepoDir = (repo: TestRepo): string => `${host.remoteHome(repo)}/remote/*/repo`;

/** A task on the host with a commit, an edit, a staged file, an untracked file and an ignored one there. */
async function taskWithWork(repo: TestRepo, id: string): Promise<string> {
  expect((await repo.warren('new', 'feat', id, '--runner', 'ssh:box')).code).toBe(0);
  const work = [
    'echo c > c.txt && git add c.txt && git commit -qm c',
    'echo edit >> README.md',
    'echo staged > staged.txt && git add staged.txt',
    'echo new > untracked.txt',
    'mkdir build && echo b > build/out.txt',
  ].join(' && ');
  const ran = await repo.warren('exec', id, '--', 'sh', '-c', work);
  expect(ran.code, ran.stderr).toBe(0);
  const shown = await repo.warrenJson<{ runner: { remotePath: string } }>('show', id);
  return shown.json.runner.remotePath;
}

describe.skipIf(noSshd !== null)('rm --discard and provision of a task on another machine', () => {
  beforeAll(async () => {
    host = await startSshHost('warrenssh-d');
  }, 120_000);

  afterAll(() => host?.stop());

  it(
    'rm --discard archives the workspace there here (the local archive ref), then removes it there; restore brings it back',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({ '.gitignore': 'build/\n' });
      const there = await taskWithWork(repo, 'd');

      const rm = await repo.warren('rm', 'd', '--discard');
      expect(rm.code, rm.stderr).toBe(0);
      const ref = /everything is saved in (refs\/warren\/archive\/d\/\S+)/.exec(rm.stdout)?.[1] ?? '';
      expect(ref).not.toBe('');
      // Its tree: the files there, untracked included, the ignored one left out; its index as the second parent.
      const files = repo.git('ls-tree', '-r', '--name-only', ref).split('\n');
      expect(files.sort()).toEqual(['.gitignore', 'README.md', 'c.txt', 'staged.txt', 'untracked.txt']);
      expect(repo.git('show', `${ref}:README.md`)).toContain('edit');
      const index = repo.git('ls-tree', '-r', '--name-only', `${ref}^2`).split('\n');
      expect(index).toContain('staged.txt');
      expect(index).not.toContain('untracked.txt');
      // Said as a local discard says it: the same archive, listed as warren made it.
      expect(rm.stdout).toContain('discarded d and branch feat/d');
      const archived = await repo.warrenJson<{ id: string; ref: string }[]>('list', '--archived');
      expect(archived.json.map((a) => a.ref)).toEqual([ref]);
      // Gone there, and nothing left of the fetch here.
      expect(host.asHost(`test -e ${there}`).code).not.toBe(0);
      expect(repo.git('for-each-ref', 'refs/warren/remote-discard', 'refs/warren/quarantine')).toBe('');

      // Recovery, as of a local discard: the commit, the edit, the staged and the untracked file.
      const restored = await repo.warrenJson<{ path: string }>('restore', 'd');
      expect(restored.code, restored.stderr).toBe(0);
      const at = restored.json.path;
      expect(fs.readFileSync(path.join(at, 'c.txt'), 'utf8')).toBe('c\n');
      expect(repo.git('-C', at, 'diff', '--name-only')).toBe('README.md');
      expect(repo.git('-C', at, 'diff', '--cached', '--name-only')).toBe('staged.txt');
      expect(repo.git('-C', at, 'ls-files', '--others', '--exclude-standard')).toBe('untracked.txt');
      expect(fs.readFileSync(path.join(at, 'README.md'), 'utf8')).toContain('edit');
      expect((await repo.warren('rm', 'd', '--discard')).code).toBe(0);
    },
  );

  it(
    'a workspace there that cannot be brought here is not removed: refused, the task and its workspace there as they were',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo({ '.gitignore': 'build/\n' });
      const there = await taskWithWork(repo, 'u');
      // The host's git will not serve the snapshot's ref (its upload-pack hides it): the fetch finds nothing.
      const hide = `cd ${hostRepoDir(repo)} && git config uploadpack.hideRefs refs/warren/discard`;
      expect(host.asHost(hide).code).toBe(0);

      const refused = await repo.warrenJson<{ error: { code: string; message: string } }>('rm', 'u', '--discard');
      expect(refused.code).toBe(1);
      expect(refused.json.error.code).toBe('REMOTE_FAILED');
      expect(refused.json.error.message).toContain("could not bring task u's workspace on host box here to archive it");
      expect(refused.json.error.message).toContain('nothing was removed or lost');
      // Nothing changed: the task here, no archive, and its work there.
      const shown = await repo.warrenJson<{ state: string }>('show', 'u');
      expect(shown.json.state).toBe('ready');
      expect(repo.git('for-each-ref', 'refs/warren/archive', 'refs/warren/remote-discard')).toBe('');
      expect(host.asHost(`cat ${there}/untracked.txt ${there}/README.md`).out).toContain('edit');
      expect(host.asHost(`cd ${there} && git status --porcelain`).out).toContain('?? untracked.txt');

      // Served again: the same command archives it and removes it.
      expect(host.asHost(`cd ${hostRepoDir(repo)} && git config --unset uploadpack.hideRefs`).code).toBe(0);
      const rm = await repo.warren('rm', 'u', '--discard');
      expect(rm.code, rm.stderr).toBe(0);
      expect(host.asHost(`test -e ${there}`).code).not.toBe(0);
    },
  );

  it(
    'provision runs on the host, in its workspace there; --refresh provisions again from its main checkout',
    {
      timeout: 300_000,
    },
    async () => {
      const repo = host.hostRepo({
        '.gitignore': 'cache/\n',
        'warren.yaml': 'provision:\n  - {path: cache, mode: copy}\n',
      });
      // The host's repository made by a first task, then an ignored cache/ in its main checkout.
      expect((await repo.warren('new', 'feat', 'first', '--runner', 'ssh:box')).code).toBe(0);
      expect(host.asHost(`cd ${hostRepoDir(repo)} && mkdir cache && echo one > cache/data.txt`).code).toBe(0);
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'p', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const there = (await repo.warrenJson<{ runner: { remotePath: string } }>('show', 'p')).json.runner.remotePath;
      expect(host.asHost(`cat ${there}/cache/data.txt`).out).toBe('one');

      // `provision`: the host's answer, its records of the path it provisioned there.
      const plain = await repo.warrenJson<{ host: string; provision: { path: string }[] }>('provision', 'p');
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.json.host).toBe('box');
      expect(plain.json.provision.map((r) => r.path)).toEqual(['cache']);

      // Changed there, then provisioned again from the host's main checkout as it is now.
      expect(
        host.asHost(`echo mine > ${there}/cache/data.txt && cd ${hostRepoDir(repo)} && echo three > cache/data.txt`)
          .code,
      ).toBe(0);
      const refreshed = await repo.warrenJson<{
        host: string;
        provision: { path: string; mode: string }[];
        skips: unknown[];
      }>('provision', 'p', '--refresh');
      expect(refreshed.code, refreshed.stderr).toBe(0);
      expect(refreshed.json.host).toBe('box');
      expect(refreshed.json.provision.map((r) => [r.path, r.mode])).toEqual([['cache', 'copy']]);
      expect(host.asHost(`cat ${there}/cache/data.txt`).out).toBe('three');
      // Its events there said here; nothing provisioned in the coordinator's copy of the branch.
      const events = (await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'p')).json.events;
      expect(events.some((e) => e.kind === 'remote.relayed' && e.message.startsWith('on host box: '))).toBe(true);
      expect(fs.existsSync(path.join(made.json.path, 'cache'))).toBe(false);
      expect((await repo.warren('rm', 'p', '--discard')).code).toBe(0);
      expect((await repo.warren('rm', 'first')).code).toBe(0);
    },
  );
});
