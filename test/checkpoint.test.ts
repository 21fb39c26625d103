import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/composition.js';
import { newTask, writeIn } from './helpers/land.js';
import { gitIn, makeRepo, tmpDir } from './helpers/repo.js';

interface CheckpointJson {
  commit: string | null;
  head: string;
  nothingToCommit: boolean;
  unstaged: string[];
}

describe('warren checkpoint', () => {
  // Regression: naming an already-ignored path in an exclude pathspec made `git add` fail with
  // "paths are ignored" after staging the rest (found by `npm run demo`).
  it('checkpoints a workspace whose provisioned paths .gitignore already covers', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n.env\n',
        'warren.yaml': 'provision:\n  - { path: node_modules, mode: copy }\n  - { path: .env, mode: copy }\n',
        'README.md': '# r\n',
      },
    });
    fs.mkdirSync(path.join(repo.root, 'node_modules', 'dep'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, 'node_modules', 'dep', 'index.js'), 'x\n');
    fs.writeFileSync(path.join(repo.root, '.env'), 'SECRET=1\n');
    const ws = await newTask(repo, 'G-1');
    expect(fs.existsSync(path.join(ws, '.env'))).toBe(true);
    writeIn(ws, 'feature.js', 'export {};\n');
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'G-1', '-m', 'feature');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(gitIn(ws, 'show', '--name-only', '--format=', 'HEAD')).toBe('feature.js');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('');
  });

  it('commits everything but never a provisioned path, even a share symlink that .gitignore does not match', async () => {
    // `node_modules/` (trailing slash) matches directories only: a share symlink would be committed as a blob.
    const repo = makeRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'warren.yaml': 'provision:\n  - { path: node_modules, mode: share }\n',
        'README.md': '# r\n',
      },
    });
    const ws = await newTask(repo, 'T-1');
    const shared = path.join(tmpDir(), 'shared-node_modules');
    fs.mkdirSync(shared);
    fs.symlinkSync(shared, path.join(ws, 'node_modules'));
    // A path recorded by the provisioning feature in task.data.provision, not in warren.yaml.
    writeIn(ws, '.env', 'copied by warren\n');
    const store = openStore(repo.home);
    try {
      const task = store.listTasks().find((t) => t.id === 'T-1');
      if (!task) throw new Error('no task row');
      // Written as an older warren (or a hand edit) might have: one well-formed record, one not.
      const provision = [{ path: '.env', mode: 'copy', source: path.join(repo.root, '.env') }, { bogus: true }];
      store.db
        .prepare('UPDATE tasks SET data = ? WHERE project = ? AND id = ?')
        .run(JSON.stringify({ provision }), task.project, 'T-1');
    } finally {
      store.close();
    }
    writeIn(ws, 'src/work.ts', 'export {};\n');
    gitIn(ws, 'add', '-f', '.env'); // staged by hand: warren takes it back out

    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'T-1', '-m', 'work');
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(r.json.unstaged).toEqual(['.env']);
    expect(gitIn(ws, 'show', '--name-only', '--format=', 'HEAD')).toBe('src/work.ts');
    expect(gitIn(ws, 'log', '-1', '--format=%s')).toBe('work');
    expect(fs.lstatSync(path.join(ws, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(ws, '.env'), 'utf8')).toBe('copied by warren\n');
  });

  it('says so, and exits 0, when there is nothing to commit', async () => {
    const repo = makeRepo();
    await newTask(repo, 'T-1');
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'T-1');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ commit: null, nothingToCommit: true, head: repo.git('rev-parse', 'main') });
    expect((await repo.warren('checkpoint', 'T-1')).stdout).toContain('nothing to commit');
  });

  it('refuses an unknown task and a hostile ID without touching anything', async () => {
    const repo = makeRepo();
    expect((await repo.warrenJson<{ error: { code: string } }>('checkpoint', 'nope')).json.error.code).toBe(
      'TASK_NOT_FOUND',
    );
    expect((await repo.warrenJson<{ error: { code: string } }>('checkpoint', '../x')).json.error.code).toBe(
      'ID_INVALID',
    );
  });

  it('runs checkpoints in 8 workspaces at the same time, each committing its own work', async () => {
    const repo = makeRepo();
    const ids = Array.from({ length: 8 }, (_, i) => `P-${i}`);
    const paths: string[] = [];
    for (const id of ids) paths.push(await newTask(repo, id));
    ids.forEach((id, i) => {
      for (let f = 0; f < 20; f++) writeIn(paths[i] ?? '', `work/${id}/f${f}.txt`, `${id} ${f}\n`);
    });
    const results = await Promise.all(
      ids.map((id) => repo.warrenJson<CheckpointJson>('checkpoint', id, '-m', `work of ${id}`)),
    );
    results.forEach((r, i) => {
      const id = ids[i] ?? '';
      expect(r.code, `${id}: ${r.stdout} ${r.stderr}`).toBe(0);
      expect(repo.git('rev-parse', `feat/${id}`)).toBe(r.json.commit);
      expect(repo.git('log', '-1', '--format=%s', `feat/${id}`)).toBe(`work of ${id}`);
      const changed = repo.git('show', '--name-only', '--format=', `feat/${id}`).split('\n');
      expect(changed).toHaveLength(20);
      expect(changed.every((p) => p.startsWith(`work/${id}/`))).toBe(true);
      expect(gitIn(paths[i] ?? '', 'status', '--porcelain')).toBe('');
    });
    expect(repo.git('fsck', '--no-progress', '--connectivity-only')).toBe('');
  });

  it('refuses when the workspace was switched to another branch, committing nothing', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'T-1');
    gitIn(ws, 'switch', '-q', '-c', 'elsewhere');
    writeIn(ws, 'a.txt', 'work\n');
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('checkpoint', 'T-1');
    expect(r.json.error.code).toBe('TASK_STATE');
    expect(r.json.error.message).toContain('branch elsewhere');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('?? a.txt');
    expect((await repo.warrenJson<{ error: { code: string } }>('land', 'T-1')).json.error.code).toBe('TASK_STATE');
  });

  it('--no-verify skips a hook that reads .git as a folder (which fails in a worktree); audit warns about such a hook', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'scripts/verify-commit.js': VERIFY_COMMIT } });
    // As vue's commit-msg hook does: it runs a script that reads .git/COMMIT_EDITMSG.
    fs.writeFileSync(
      path.join(repo.root, '.git', 'hooks', 'commit-msg'),
      '#!/bin/sh\nnode scripts/verify-commit.js\n',
      {
        mode: 0o755,
      },
    );
    const ws = await newTask(repo, 'hooked');
    writeIn(ws, 'feature.js', 'export {};\n');
    const refused = await repo.warrenJson<{ error: { code: string; hint: string } }>('checkpoint', 'hooked', '-m', 'f');
    expect(refused.code).toBe(1);
    expect(refused.json.error.hint).toContain('`warren checkpoint hooked --no-verify`');
    const audit = await repo.warren('audit', 'hooked');
    expect(audit.stdout).toContain(
      'WARN: hook commit-msg assumes .git is a folder (scripts/verify-commit.js, which it runs, reads .git/COMMIT_EDITMSG)',
    );
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'hooked', '-m', 'feature', '--no-verify');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warren: warn: the pre-commit and commit-msg hooks were skipped (--no-verify)');
    expect(gitIn(ws, 'show', '--name-only', '--format=', 'HEAD')).toBe('feature.js');
  });
});

const VERIFY_COMMIT = `const fs = require('fs');
const msg = fs.readFileSync('.git/COMMIT_EDITMSG', 'utf8');
if (!msg.trim()) process.exit(1);
`;
