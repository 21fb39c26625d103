import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { newTask, writeIn } from '../helpers/land.js';
import { unavailable } from '../helpers/capabilities.js';
import { gitIn, makeRepo, tmpDir } from '../helpers/repo.js';

const noBwrap = unavailable(import.meta.filename, 'bwrap');

interface CheckpointJson {
  commit: string | null;
  head: string;
  nothingToCommit: boolean;
  unstaged: string[];
  hooks: { hook: string; ms: number }[];
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

describe('what a checkpoint asks of git', () => {
  it('with no commit hook: no `git var` for the hooks, and what is staged listed after staging and after the hooks, nothing more', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'Q-1');
    writeIn(ws, 'feature.js', 'export {};\n');
    const trace = path.join(tmpDir('warren-trace-'), 'trace');
    const before = process.env.GIT_TRACE;
    process.env.GIT_TRACE = trace;
    try {
      const r = await repo.warren('checkpoint', 'Q-1', '-m', 'a feature');
      expect(r.code, r.stderr).toBe(0);
    } finally {
      if (before === undefined) delete process.env.GIT_TRACE;
      else process.env.GIT_TRACE = before;
    }
    expect(gitIn(ws, 'log', '-1', '--format=%s')).toBe('a feature');
    const ran = fs
      .readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => l.includes('trace: built-in: git '))
      .map((l) => l.slice(l.indexOf('built-in: git ') + 'built-in: git '.length));
    expect(ran.filter((c) => c.startsWith('var '))).toEqual([]);
    // Whether anything is staged is read from the first list (`diff --cached --quiet` was a third call).
    expect(ran.filter((c) => c.startsWith('diff ') && c.includes('--cached'))).toEqual([
      'diff --cached --name-only -z --no-renames',
      'diff --cached --name-only -z --no-renames',
    ]);
  });
});

/** A commit hook of the main checkout's that logs its name, arguments and git's variables to `log`, then runs `body`. */
function commitHook(root: string, name: string, log: string, body = '', mode = 0o755): void {
  fs.writeFileSync(
    path.join(root, '.git', 'hooks', name),
    `#!/bin/sh\necho "${name} $*" >> ${log}\necho "  index=$GIT_INDEX_FILE author=$GIT_AUTHOR_NAME date=$GIT_AUTHOR_DATE dir=$GIT_DIR" >> ${log}\n${body}\n`,
    { mode },
  );
}

describe('the commit hooks, as git commit runs them', () => {
  it("in git's order, with its arguments and variables; a commit-msg that edits the message is honoured; post-commit after", async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n' } });
    const log = path.join(tmpDir('warren-hooks-'), 'log');
    commitHook(repo.root, 'pre-commit', log);
    commitHook(repo.root, 'prepare-commit-msg', log, 'echo "prepared: $(cat "$1")" >> ' + log);
    commitHook(
      repo.root,
      'commit-msg',
      log,
      'printf "feat: %s\\n\\nSigned-off-by: hook\\n" "$(cat "$1")" > "$1.new" && mv "$1.new" "$1"',
    );
    commitHook(repo.root, 'post-commit', log, `git log -1 --format=%s >> ${log}`);
    const ws = await newTask(repo, 'H-1');
    const gitDir = gitIn(ws, 'rev-parse', '--absolute-git-dir');
    writeIn(ws, 'feature.js', 'export {};\n');
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'H-1', '-m', 'a feature');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(gitIn(ws, 'log', '-1', '--format=%B', 'HEAD')).toBe('feat: a feature\n\nSigned-off-by: hook');
    // What its time went to: each hook it ran, timed (a checkpoint's seconds are its hooks', issue 41).
    expect(r.json.hooks.map((h) => h.hook)).toEqual(['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit']);
    expect(r.json.hooks.every((h) => Number.isInteger(h.ms) && h.ms >= 0)).toBe(true);
    const date = gitIn(ws, 'log', '-1', '--format=%ad', '--date=raw', 'HEAD');
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    const variables = `  index=${gitDir}/index author=Warren Test date=@${date} dir=${gitDir}`;
    expect(lines.map((l) => l.replace(/\/COMMIT_EDITMSG-[0-9a-f]+/g, '/MSG'))).toEqual([
      'pre-commit ',
      variables,
      expect.stringMatching(/^prepare-commit-msg \/.*\/tmp\/MSG message$/),
      variables,
      'prepared: a feature',
      expect.stringMatching(/^commit-msg \/.*\/tmp\/MSG$/),
      variables,
      'post-commit ',
      variables,
      'feat: a feature',
      '',
    ]);
    // The message file was the task's, in its TMPDIR, and is gone.
    const msgFile = /^commit-msg (\S+)$/m.exec(fs.readFileSync(log, 'utf8'))?.[1] ?? '';
    expect(msgFile.startsWith(path.join(repo.home, 'logs'))).toBe(true);
    expect(fs.existsSync(msgFile)).toBe(false);
    // Each hook was a run of the task's, with its log.
    const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>(
      'show',
      'H-1',
      '--events',
      '50',
    );
    const started = shown.json.events.filter((e) => e.kind === 'run.started').map((e) => e.message.split(' (')[0]);
    expect(started).toEqual([
      'hook pre-commit started',
      'hook prepare-commit-msg started',
      'hook commit-msg started',
      'hook post-commit started',
    ]);
  });

  it('a pre-commit that fails refuses, everything staged; --no-verify skips pre-commit and commit-msg, not the others; a hook that is not executable is skipped', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n' } });
    const log = path.join(tmpDir('warren-hooks-'), 'log');
    commitHook(repo.root, 'pre-commit', log, 'echo "lint: 2 problems" >&2; exit 1');
    commitHook(repo.root, 'commit-msg', log, 'exit 1');
    commitHook(repo.root, 'prepare-commit-msg', log, '', 0o644);
    commitHook(repo.root, 'post-commit', log);
    const ws = await newTask(repo, 'H-2');
    writeIn(ws, 'feature.js', 'export {};\n');
    const head = gitIn(ws, 'rev-parse', 'HEAD');
    const refused = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(
      'checkpoint',
      'H-2',
      '-m',
      'f',
    );
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('COMMAND_FAILED');
    expect(refused.json.error.message).toContain(
      'the pre-commit hook refused the checkpoint of H-2 (exit 1): lint: 2 problems',
    );
    expect(refused.json.error.message).toContain('the changes are staged in the workspace, and no file was lost');
    expect(refused.stderr).toContain('lint: 2 problems'); // the hook's output, shown as git shows it
    expect(gitIn(ws, 'rev-parse', 'HEAD')).toBe(head);
    expect(gitIn(ws, 'status', '--porcelain')).toBe('A  feature.js');

    fs.writeFileSync(log, '');
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'H-2', '-m', 'f', '--no-verify');
    expect(r.code, r.stdout).toBe(0);
    expect(
      fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith(' ')),
    ).toEqual(['post-commit ', '']);
    expect(gitIn(ws, 'show', '--name-only', '--format=', 'HEAD')).toBe('feature.js');
    const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>(
      'show',
      'H-2',
      '--events',
      '50',
    );
    expect(shown.json.events.filter((e) => e.kind === 'checkpoint.hook_ignored').map((e) => e.message)).toEqual([
      expect.stringMatching(/the prepare-commit-msg hook .* was ignored because it is not executable/),
    ]);
  });
});

describe.skipIf(noBwrap !== null)('the commit hooks of a sandboxed task', () => {
  it("husky's layout (core.hooksPath .husky/_ in the main checkout): the main checkout's .husky/pre-commit runs, in the sandbox", async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'warren.yaml': 'sandbox: bwrap\n',
        '.gitignore': '.husky/_\n',
        '.husky/pre-commit': 'touch .ran-main\n',
      },
    });
    // As husky 9 makes it: each hook in .husky/_ runs the script of its name in .husky.
    fs.mkdirSync(path.join(repo.root, '.husky', '_'));
    fs.writeFileSync(
      path.join(repo.root, '.husky', '_', 'pre-commit'),
      '#!/bin/sh\nsh -e "$(dirname "$(dirname "$0")")/$(basename "$0")" "$@"\n',
      { mode: 0o755 },
    );
    repo.git('config', 'core.hooksPath', '.husky/_');
    const ws = await newTask(repo, 'H-3');
    writeIn(ws, '.husky/pre-commit', 'touch .ran-agent\n'); // the agent's own copy: not the one that runs
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'H-3', '-m', 'work');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(fs.existsSync(path.join(ws, '.ran-main'))).toBe(true);
    expect(fs.existsSync(path.join(ws, '.ran-agent'))).toBe(false);
  });

  it("a pre-commit that writes git's object store (lint-staged's git add) is refused with why, and --no-verify as the way on", async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    fs.writeFileSync(
      path.join(repo.root, '.git', 'hooks', 'pre-commit'),
      '#!/bin/sh\necho fixed >> a.txt && git add a.txt\n',
      {
        mode: 0o755,
      },
    );
    const ws = await newTask(repo, 'H-4');
    writeIn(ws, 'a.txt', 'work\n');
    const refused = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(
      'checkpoint',
      'H-4',
      '-m',
      'work',
    );
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('COMMAND_FAILED');
    expect(refused.json.error.message).toMatch(
      /the pre-commit hook failed in task H-4's sandbox .*: it wrote to git's object store or refs, which the sandbox keeps read-only/,
    );
    expect(refused.json.error.hint).toContain('`warren checkpoint H-4 --no-verify`');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('AM a.txt');
    const r = await repo.warrenJson<CheckpointJson>('checkpoint', 'H-4', '-m', 'work', '--no-verify');
    expect(r.code, r.stdout).toBe(0);
  });
});

const VERIFY_COMMIT = `const fs = require('fs');
const msg = fs.readFileSync('.git/COMMIT_EDITMSG', 'utf8');
if (!msg.trim()) process.exit(1);
`;
