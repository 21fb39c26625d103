import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newTask, snapshot, writeIn } from '../helpers/land.js';
import { makeRepo } from '../helpers/repo.js';

interface ErrJson {
  error: { code: string; message: string };
}

function addHook(root: string, name: string, body: string): void {
  const file = path.join(root, '.git', 'hooks', name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`);
  fs.chmodSync(file, 0o755);
}

describe('shared hooks fingerprint', () => {
  it.each([
    ['added', (root: string) => addHook(root, 'pre-commit', 'exit 0')],
    ['changed', (root: string) => addHook(root, 'commit-msg', 'echo changed')],
    ['removed', (root: string) => fs.rmSync(path.join(root, '.git', 'hooks', 'commit-msg'))],
  ])(
    'refuses checkpoint and land when a hook was %s, with everything unchanged, until --accept-hooks',
    async (change, mutate) => {
      const repo = makeRepo({ files: { 'README.md': '# r\n' } });
      addHook(repo.root, 'commit-msg', 'exit 0');
      const ws = await newTask(repo, 'T-1');
      writeIn(ws, 'a.txt', 'work\n');
      mutate(repo.root);
      const hook = change === 'added' ? 'pre-commit' : 'commit-msg';

      const before = snapshot(repo, ws);
      const cp = await repo.warrenJson<ErrJson>('checkpoint', 'T-1');
      expect(cp.code).toBe(1);
      expect(cp.json.error.code).toBe('HOOKS_CHANGED');
      expect(cp.json.error.message).toContain(`hook ${hook} ${change}`);
      expect(snapshot(repo, ws)).toBe(before);

      expect((await repo.warrenJson('checkpoint', 'T-1', '--accept-hooks')).code).toBe(0);
      // Accepted: the new hooks are the baseline, so land goes through without the flag.
      const landed = await repo.warrenJson<{ commit: string }>('land', 'T-1');
      expect(landed.code, landed.stdout).toBe(0);
      const show = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'T-1');
      expect(show.json.events.map((e) => e.kind)).toContain('fingerprint.accepted');
    },
  );

  it('refuses land on a hook change after the last checkpoint, with refs and files unchanged', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'T-1');
    writeIn(ws, 'a.txt', 'work\n');
    expect((await repo.warren('checkpoint', 'T-1')).code).toBe(0);
    addHook(repo.root, 'pre-push', 'exit 1');
    const before = snapshot(repo, ws);
    const r = await repo.warrenJson<ErrJson>('land', 'T-1');
    expect(r.json.error.code).toBe('HOOKS_CHANGED');
    expect(r.json.error.message).toContain('hook pre-push added');
    expect(snapshot(repo, ws)).toBe(before);
    expect((await repo.warren('land', 'T-1', '--accept-hooks')).code).toBe(0);
  });

  it('does not refuse a changed shared config, but warns on every checkpoint and records it', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'T-1');
    repo.git('config', 'core.autocrlf', 'input'); // applies to every worktree of the repository
    writeIn(ws, 'a.txt', 'work\n');
    const r = await repo.warrenJson<{ commit: string; warnings: string[] }>('checkpoint', 'T-1');
    expect(r.code).toBe(0);
    expect(r.json.warnings).toHaveLength(1);
    expect(r.json.warnings[0]).toContain('shared git config changed since task T-1 began');
    expect(r.stderr).toContain('warren: warn: checkpoint:');
    const show = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'T-1');
    expect(show.json.events.map((e) => e.kind)).toContain('fingerprint.config_changed');
  });

  it('warns at new when a relative core.hooksPath does not exist in the workspace (husky)', async () => {
    const repo = makeRepo({ files: { '.gitignore': '.husky/_\n', '.husky/pre-commit': 'npm test\n' } });
    fs.mkdirSync(path.join(repo.root, '.husky', '_'));
    fs.writeFileSync(path.join(repo.root, '.husky', '_', 'pre-commit'), '#!/bin/sh\n');
    repo.git('config', 'core.hooksPath', '.husky/_');
    const r = await repo.warrenJson<{ warnings: { kind: string; message: string }[] }>(
      'new',
      'feat',
      'T-1',
      '--no-sync',
    );
    expect(r.code).toBe(0);
    expect(r.json.warnings.map((w) => w.kind)).toContain('hooks.missing');
    expect(r.stderr).toContain('core.hooksPath is .husky/_');
    expect(r.stderr).toContain('will silently NOT run');

    // The same ID made again once the hooks are fixed: no stale warning from the first task's events.
    expect((await repo.warren('rm', 'T-1', '--delete-branch')).code).toBe(0);
    repo.git('config', '--unset', 'core.hooksPath');
    const again = await repo.warrenJson<{ warnings: unknown[] }>('new', 'feat', 'T-1', '--no-sync');
    expect(again.json.warnings).toEqual([]);
  });
});
