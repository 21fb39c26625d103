import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import {
  makeRepo,
  refsAndWorktrees,
  runCli,
  runWarren,
  tmpDir,
  type CliResult,
  type TestRepo,
} from '../helpers/repo.js';

/**
 * Where workspaces go is the user's word, and warren deletes only what it made. A committed
 * `worktree_root: /etc` once made warren create workspaces there, and `gc` then deleted the
 * folder's empty entries (/boot, /srv, /etc/profile.d on a test machine).
 */

interface ErrorJson {
  error: { code: string; message: string; hint?: string };
}
interface ScanJson {
  strays: { kind: string; path?: string; reason: string }[];
}
interface GcJson {
  removed: { kind: string; path?: string }[];
  kept: { kind: string; path: string; reason: string }[];
}

/** A stand-in for a system folder: empty entries a careless gc would take for strays. */
function systemLikeFolder(): { dir: string; listing: () => string[] } {
  const dir = tmpDir('warren-system-');
  for (const d of ['boot', 'srv', 'etc/profile.d']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.writeFileSync(path.join(dir, 'etc', 'hostname'), 'box\n');
  const listing = () => fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
  return { dir, listing };
}

/** The CLI with `--json` and extra environment (in this process; the human `scan` and `rm` below are real ones). */
async function withEnv<T>(
  repo: TestRepo,
  env: Record<string, string>,
  ...args: string[]
): Promise<CliResult & { json: T }> {
  const r = await runWarren(['--json', ...args], { cwd: repo.root, home: repo.home, env });
  return { ...r, json: JSON.parse(r.stdout) as T };
}

function projectKeyOf(repo: TestRepo): string {
  const store = openStore(repo.home);
  try {
    return store.listProjects()[0]?.key ?? '';
  } finally {
    store.close();
  }
}

describe('a repository may not place workspaces outside itself', () => {
  const cases: [string, (repo: TestRepo, sys: string) => string][] = [
    ['an absolute folder elsewhere', (_repo, sys) => sys],
    ['a relative path out of the repository', (repo, sys) => path.relative(repo.root, sys)],
    ['.git', () => '.git'],
    ['a folder inside .git', () => '.git/worktrees-here'],
    ['the repository root itself', () => '.'],
    [
      'a symlink inside the repository that points out',
      (repo, sys) => {
        fs.symlinkSync(sys, path.join(repo.root, 'sys'));
        return 'sys';
      },
    ],
    [
      'a folder under a symlink that points out',
      (repo, sys) => {
        fs.symlinkSync(sys, path.join(repo.root, 'sys'));
        return 'sys/etc';
      },
    ],
    [
      'a dangling symlink',
      (repo, sys) => {
        fs.symlinkSync(path.join(sys, 'not-yet'), path.join(repo.root, 'later'));
        return 'later';
      },
    ],
  ];

  it.each(cases)(
    '%s: new and gc refuse with exit 2 naming worktree_root, and nothing is created or deleted',
    async (_what, rootFor) => {
      const repo = makeRepo();
      const sys = systemLikeFolder();
      repo.write('warren.yaml', `worktree_root: ${JSON.stringify(rootFor(repo, sys.dir))}\n`);
      const before = {
        refs: refsAndWorktrees(repo.root),
        system: sys.listing(),
        exclude: fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8'),
      };

      const made = await repo.warrenJson<ErrorJson>('new', 'feat', 'T-1', '--no-setup');
      expect(made.code).toBe(2);
      expect(made.json.error.code).toBe('CONFIG_INVALID');
      expect(made.json.error.message).toMatch(/worktree_root/);
      expect(made.json.error.hint).toMatch(/WARREN_WORKTREE_ROOT/);
      const gc = await repo.warrenJson<ErrorJson>('gc');
      expect(gc.code).toBe(2);

      expect(refsAndWorktrees(repo.root)).toBe(before.refs);
      expect(sys.listing()).toEqual(before.system);
      expect(fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8')).toBe(before.exclude);
      expect(fs.existsSync(path.join(repo.root, '.git', 'worktrees-here'))).toBe(false);
    },
  );

  // Read-only here: scan never deletes, so even a regression cannot touch the real folders.
  it.each(['/', '/etc', '../../..'])('%s: scan refuses with exit 2', async (root) => {
    const repo = makeRepo();
    repo.write('warren.yaml', `worktree_root: ${JSON.stringify(root)}\n`);
    const scan = await repo.warrenJson<ErrorJson>('scan');
    expect(scan.code).toBe(2);
    expect(scan.json.error.message).toMatch(/worktree_root .* not a folder inside the repository/);
  });

  it('takes a folder inside the repository (kept out of git) or under WARREN_HOME', async () => {
    const inside = makeRepo();
    inside.write('warren.yaml', 'worktree_root: .worktrees\n');
    const a = await inside.warrenJson<{ path: string }>('new', 'feat', 'T-2');
    expect(a.code).toBe(0);
    expect(a.json.path).toBe(path.join(inside.root, '.worktrees', 'T-2'));
    expect(fs.readFileSync(path.join(inside.root, '.git/info/exclude'), 'utf8')).toContain('/.worktrees/');

    const home = makeRepo();
    home.write('warren.yaml', `worktree_root: ${JSON.stringify(path.join(home.home, 'elsewhere'))}\n`);
    const b = await home.warrenJson<{ path: string }>('new', 'feat', 'T-2');
    expect(b.code).toBe(0);
    expect(b.json.path).toBe(path.join(home.home, 'elsewhere', 'T-2'));
  });

  it('refuses a folder of the repository that git tracks files in: excluding it would hide new files from git', async () => {
    const repo = makeRepo({ files: { 'src/a.txt': 'a\n' } });
    repo.write('warren.yaml', 'worktree_root: src\n');
    const exclude = fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8');
    const made = await repo.warrenJson<ErrorJson>('new', 'feat', 'T-3');
    expect(made.code).toBe(2);
    expect(made.json.error.message).toMatch(/holds files git tracks/);
    expect(fs.readFileSync(path.join(repo.root, '.git/info/exclude'), 'utf8')).toBe(exclude);
    expect(fs.readdirSync(path.join(repo.root, 'src'))).toEqual(['a.txt']);
  });
});

describe('the user chooses a root anywhere', () => {
  it('WARREN_WORKTREE_ROOT holds one folder per repository, and wins over warren.yaml', async () => {
    const repo = makeRepo();
    repo.write('warren.yaml', 'worktree_root: .worktrees\n');
    const mine = tmpDir('warren-user-root-');
    const r = await withEnv<{ path: string }>(repo, { WARREN_WORKTREE_ROOT: mine }, 'new', 'feat', 'T-4');
    expect(r.code).toBe(0);
    expect(r.json.path).toBe(path.join(mine, projectKeyOf(repo), 'T-4'));
    expect(fs.existsSync(path.join(repo.root, '.worktrees'))).toBe(false);
  });

  it('so does worktree_root in $WARREN_HOME/config.yaml; a relative one is refused (exit 2)', async () => {
    const repo = makeRepo();
    const mine = tmpDir('warren-user-root-');
    fs.mkdirSync(repo.home, { recursive: true });
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), `worktree_root: ${JSON.stringify(mine)}\n`);
    const r = await repo.warrenJson<{ path: string }>('new', 'feat', 'T-5');
    expect(r.code).toBe(0);
    expect(r.json.path).toBe(path.join(mine, projectKeyOf(repo), 'T-5'));

    fs.writeFileSync(path.join(repo.home, 'config.yaml'), 'worktree_root: relative/wt\n');
    const bad = await repo.warrenJson<ErrorJson>('list');
    expect(bad.code).toBe(2);
    expect(bad.json.error.message).toMatch(/config\.yaml: worktree_root "relative\/wt" is not an absolute path/);
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), 'worktree_rot: /x\n');
    expect((await repo.warrenJson<ErrorJson>('list')).json.error.message).toMatch(/unknown key "worktree_rot"/);
    const env = await withEnv<ErrorJson>(repo, { WARREN_WORKTREE_ROOT: 'wt' }, 'list');
    expect(env.code).toBe(2);
    expect(env.json.error.message).toMatch(/WARREN_WORKTREE_ROOT/);
  });
});

describe('scan, gc and rm delete only what warren made', () => {
  const roots: [string, (repo: TestRepo) => Record<string, string>][] = [
    ['a root the user chose (WARREN_WORKTREE_ROOT)', () => ({ WARREN_WORKTREE_ROOT: tmpDir('warren-user-root-') })],
    [
      'a root inside the repository (warren.yaml)',
      (repo) => {
        repo.write('warren.yaml', 'worktree_root: .worktrees\n');
        return {};
      },
    ],
  ];

  it.each(roots)(
    '%s: folders and worktrees warren did not make are listed as foreign, and gc deletes none',
    async (_what, setUp) => {
      const repo = makeRepo();
      const env = setUp(repo);
      const made = await withEnv<{ path: string }>(repo, env, 'new', 'feat', 'T-6');
      expect(made.code).toBe(0);
      const root = path.dirname(made.json.path);
      // What else lives there: empty folders like /boot and /srv, a nested one, the user's notes,
      // and a worktree the user made by hand.
      for (const d of ['boot', 'srv', 'etc/profile.d']) fs.mkdirSync(path.join(root, d), { recursive: true });
      fs.mkdirSync(path.join(root, 'notes'));
      fs.writeFileSync(path.join(root, 'notes', 'todo.txt'), 'mine\n');
      repo.git('worktree', 'add', '-q', '-b', 'by-hand', path.join(root, 'mine'));
      const foreign = ['boot', 'etc', 'mine', 'notes', 'srv'].map((n) => path.join(root, n));

      const scan = await withEnv<ScanJson>(repo, env, 'scan');
      expect(scan.json.strays.map((s) => `${s.kind} ${s.path}`).sort()).toEqual(foreign.map((p) => `foreign ${p}`));
      const human = await runCli(['scan'], { cwd: repo.root, home: repo.home, env });
      expect(human.stdout).toMatch(/^foreign .*boot\s+warren did not make it/m);

      const gc = await withEnv<GcJson>(repo, env, 'gc');
      expect(gc.code).toBe(0);
      expect(gc.json.removed).toEqual([]);
      expect(gc.json.kept.map((k) => `${k.kind} ${k.path}`).sort()).toEqual(foreign.map((p) => `foreign ${p}`));
      for (const p of [...foreign, path.join(root, 'etc', 'profile.d'), made.json.path])
        expect(fs.existsSync(p), p).toBe(true);
      expect(repo.git('worktree', 'list', '--porcelain')).toContain(path.join(root, 'mine'));
      expect((await runCli(['rm', 'T-6'], { cwd: repo.root, home: repo.home, env })).code).toBe(0);
    },
  );

  it('gc still removes an empty directory warren made and git forgot; a same-looking one it did not make stays', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'T-7');
    const root = path.dirname(made.json.path);
    // A crash after warren recorded and made a directory, before git registered it.
    const store = openStore(repo.home);
    store.recordMadePath({
      path: path.join(root, 'T-8'),
      kind: 'workspace',
      project: projectKeyOf(repo),
      taskId: 'T-8',
    });
    store.close();
    fs.mkdirSync(path.join(root, 'T-8'));
    fs.mkdirSync(path.join(root, 'T-9'));
    const gc = await repo.warrenJson<GcJson>('gc');
    expect(gc.json.removed).toEqual([expect.objectContaining({ kind: 'stranded', path: path.join(root, 'T-8') })]);
    expect(gc.json.kept).toEqual([expect.objectContaining({ kind: 'foreign', path: path.join(root, 'T-9') })]);
    expect(fs.existsSync(path.join(root, 'T-8'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'T-9'))).toBe(true);
  });

  it("a workspace made before the ledger existed is still warren's: its metadata file matches its row", async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'T-10');
    const store = openStore(repo.home);
    for (const p of [made.json.path, `${made.json.path}.warren.json`]) store.forgetMadePath(p);
    store.close();
    expect((await repo.warrenJson<ScanJson>('scan')).json.strays).toEqual([]);
    expect((await repo.warren('rm', 'T-10')).code).toBe(0);
    expect(fs.existsSync(made.json.path)).toBe(false);
  });

  it("rm does not delete leftovers at a task's path that warren has no record of making", async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'T-11');
    const ws = made.json.path;
    // git forgot the workspace (remove_failed), and what is at its path now is not warren's.
    repo.git('worktree', 'remove', '--force', ws);
    fs.rmSync(`${ws}.warren.json`);
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'precious.txt'), "not warren's\n");
    const store = openStore(repo.home);
    store.forgetMadePath(ws);
    store.db.prepare("UPDATE tasks SET state = 'remove_failed' WHERE id = 'T-11'").run();
    store.close();
    const rm = await repo.warrenJson<ErrorJson>('rm', 'T-11');
    expect(rm.code).toBe(1);
    expect(rm.json.error.code).toBe('REMOVE_INCOMPLETE');
    expect(rm.json.error.message).toMatch(/no record of making it/);
    expect(fs.readFileSync(path.join(ws, 'precious.txt'), 'utf8')).toBe("not warren's\n");
  });
});
