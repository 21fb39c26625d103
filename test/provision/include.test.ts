import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LIFECYCLE, openProject, openStore } from '../../src/composition.js';
import { provisionCreate } from '../../src/provision/provision-steps.js';
import { createTask } from '../../src/workspace/create.js';
import { gitIn, makeRepo, tmpDir } from '../helpers/repo.js';
import { fullTierOnly } from '../helpers/tier.js';
import { seeded } from '../helpers/seeded.js';

/**
 * `.worktreeinclude` means what git means: the untracked files its patterns match (gitignore
 * syntax) that git also ignores; tracked files never; nested repositories and VCS metadata
 * never. The oracle is git itself; random trees and include files are compared with it.
 */

const DIRS = ['cache', 'logs', 'config', 'node_modules', '.claude', 'sub', 'a', ' sp', 'big'];
const FILES = [
  'data.json',
  'x.log',
  'settings.local.json',
  '.env',
  '.env.local',
  'keep.txt',
  'a.js',
  ' lead.txt',
  'b.json',
  'secret',
];

interface Case {
  files: { rel: string; tracked: boolean }[];
  links: { rel: string; target: string }[];
  gitignore: string;
  nestedIgnore: { dir: string; text: string } | null;
  include: string;
  /** Folders holding another repository (git init), or other VCS metadata. */
  nestedRepos: string[];
  hgDirs: string[];
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

function randomDir(r: () => number): string {
  const depth = Math.floor(r() * 3);
  return Array.from({ length: depth }, () => pick(r, DIRS)).join('/');
}

/** A pattern in gitignore syntax drawn from the tree's own names, so it matches something often. */
function randomPattern(r: () => number, c: Case): string {
  const file = pick(r, c.files).rel;
  const parts = file.split('/');
  const dir = parts.length > 1 ? parts.slice(0, 1 + Math.floor(r() * (parts.length - 1))).join('/') : pick(r, DIRS);
  const base = parts[parts.length - 1] as string;
  const forms = [
    () => file,
    () => `/${file}`,
    () => `${dir}/`,
    () => dir,
    () => `${dir}/*`,
    () => `${dir}/**`,
    () => `**/${base}`,
    () => `*${path.extname(base) || '.log'}`,
    () => `${dir}/*${path.extname(base) || '.json'}`,
    () => `**/${pick(r, DIRS)}/${base}`,
    () => `.env*`,
    () => base,
  ];
  let p = pick(r, forms)();
  if (r() < 0.2) p = `!${p}`;
  if (r() < 0.08) p = ` ${p}`; // git keeps leading spaces: ` cache/` is not `cache/`
  return p;
}

function randomCase(seed: number): Case {
  const r = seeded(seed);
  const c: Case = { files: [], links: [], gitignore: '', nestedIgnore: null, include: '', nestedRepos: [], hgDirs: [] };
  const seen = new Set<string>();
  const n = 4 + Math.floor(r() * 18);
  for (let i = 0; i < n; i++) {
    const dir = randomDir(r);
    const rel = dir === '' ? pick(r, FILES) : `${dir}/${pick(r, FILES)}`;
    // A path may not be both a file and a folder.
    if (seen.has(rel) || [...seen].some((s) => s.startsWith(`${rel}/`) || rel.startsWith(`${s}/`))) continue;
    seen.add(rel);
    c.files.push({ rel, tracked: r() < 0.25 });
  }
  if (c.files.length === 0) c.files.push({ rel: 'cache/data.json', tracked: false });
  // A relative link to a sibling: provisioned verbatim, listed by git as a file.
  if (r() < 0.3) {
    const f = pick(r, c.files).rel;
    const rel = `${path.posix.dirname(f) === '.' ? '' : `${path.posix.dirname(f)}/`}link-${Math.floor(r() * 100)}`;
    if (!seen.has(rel) && ![...seen].some((s) => s.startsWith(`${rel}/`))) {
      seen.add(rel);
      c.links.push({ rel, target: path.posix.basename(f) });
    }
  }
  const ignoreLines = Array.from({ length: 1 + Math.floor(r() * 5) }, () => randomPattern(r, c));
  if (r() < 0.5) ignoreLines.push(`${pick(r, DIRS)}/`);
  c.gitignore = `${ignoreLines.join('\n')}\n`;
  const dirs = [...new Set(c.files.map((f) => path.posix.dirname(f.rel)).filter((d) => d !== '.'))];
  if (dirs.length > 0 && r() < 0.3)
    c.nestedIgnore = { dir: pick(r, dirs), text: `${randomPattern(r, c).split('/').pop()}\n` };
  const includeLines = Array.from({ length: 1 + Math.floor(r() * 6) }, () => randomPattern(r, c));
  if (r() < 0.2) includeLines.splice(Math.floor(r() * includeLines.length), 0, '# a comment', '');
  c.include = `${includeLines.join('\n')}\n`;
  if (dirs.length > 0 && r() < 0.15) c.nestedRepos.push(`${pick(r, dirs)}/nested-${Math.floor(r() * 10)}`);
  if (dirs.length > 0 && r() < 0.15) c.hgDirs.push(`${pick(r, dirs)}/.hg`);
  return c;
}

function writeCase(root: string, c: Case): void {
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  write('.gitignore', c.gitignore);
  write('.worktreeinclude', c.include);
  if (c.nestedIgnore) write(`${c.nestedIgnore.dir}/.gitignore`, c.nestedIgnore.text);
  for (const f of c.files) write(f.rel, `${f.rel}\n`);
  for (const l of c.links) {
    fs.mkdirSync(path.dirname(path.join(root, l.rel)), { recursive: true });
    fs.symlinkSync(l.target, path.join(root, l.rel));
  }
  for (const dir of c.nestedRepos) {
    write(`${dir}/inside.txt`, 'a nested repository\n');
    execFileSync('git', ['init', '-q', path.join(root, dir)]);
  }
  for (const dir of c.hgDirs) write(`${dir}/store/data`, 'hg metadata\n');
  const tracked = [
    '.gitignore',
    '.worktreeinclude',
    ...(c.nestedIgnore ? [`${c.nestedIgnore.dir}/.gitignore`] : []),
    ...c.files.filter((f) => f.tracked).map((f) => f.rel),
  ];
  gitIn(root, 'add', '-f', '--', ...tracked);
  gitIn(root, 'commit', '-q', '-m', 'case');
}

function z(out: string): string[] {
  return out.split('\0').filter((s) => s !== '');
}

/** git's answer, less what warren never copies: nested repositories (`dir/`) and VCS metadata. */
function gitsAnswer(root: string): string[] {
  const ls = (...args: string[]): string[] =>
    z(execFileSync('git', ['ls-files', '-z', '-o', '-i', ...args], { cwd: root, encoding: 'utf8' }));
  const ignored = new Set(ls('--exclude-standard'));
  return ls('-X', '.worktreeinclude')
    .filter(
      (p) =>
        ignored.has(p) &&
        !p.endsWith('/') &&
        !p.split('/').some((part) => ['.git', '.jj', '.hg', '.svn'].includes(part)),
    )
    .sort();
}

/** Every file or link in the workspace that git does not track (what provisioning brought). */
function provisionedFiles(ws: string): string[] {
  const tracked = new Set(z(execFileSync('git', ['ls-files', '-z'], { cwd: ws, encoding: 'utf8' })));
  const out: string[] = [];
  const visit = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(ws, rel))) {
      const child = rel === '' ? name : `${rel}/${name}`;
      if (child === '.git') continue;
      const st = fs.lstatSync(path.join(ws, child));
      if (st.isDirectory()) visit(child);
      else if (!tracked.has(child)) out.push(child);
    }
  };
  visit('');
  return out.sort();
}

const RUNS = Number(process.env.WARREN_ORACLE_RUNS ?? 60);
const ONLY = process.env.WARREN_ORACLE_SEED === undefined ? null : Number(process.env.WARREN_ORACLE_SEED);

describe.skipIf(fullTierOnly(import.meta.filename, 'the .worktreeinclude oracle'))(
  '.worktreeinclude against git (oracle)',
  () => {
    it(
      `provisions exactly git's answer in ${ONLY === null ? RUNS : 1} random trees (WARREN_ORACLE_SEED=N replays one)`,
      { timeout: 20 * 60_000 },
      async () => {
        const seeds = ONLY === null ? Array.from({ length: RUNS }, (_, i) => 1000 + i) : [ONLY];
        const base = tmpDir();
        const store = openStore(path.join(base, 'home'));
        onTestFinished(() => store.close());
        let nonEmpty = 0;
        for (const seed of seeds) {
          const c = randomCase(seed);
          const root = path.join(base, `repo-${seed}`);
          fs.mkdirSync(root);
          gitIn(root, 'init', '-q', '-b', 'main');
          for (const [k, v] of [
            ['user.name', 'Oracle'],
            ['user.email', 'oracle@example.invalid'],
            ['commit.gpgsign', 'false'],
          ] as const) {
            gitIn(root, 'config', k, v);
          }
          writeCase(root, c);
          const expected = gitsAnswer(root);
          if (expected.length > 0) nonEmpty++;
          const ctx = await openProject(root, { store });
          ctx.lifecycle = { ...LIFECYCLE, create: [provisionCreate] };
          let actual: string[];
          try {
            const task = await createTask(ctx, { type: 'feat', id: `s${seed}`, sync: false, setup: false });
            actual = provisionedFiles(task.path);
          } catch (err) {
            throw new Error(`seed ${seed}: warren new failed: ${(err as Error).message}\n${describeCase(c)}`, {
              cause: err,
            });
          }
          if (JSON.stringify(actual) !== JSON.stringify(expected)) {
            throw new Error(
              `seed ${seed} (replay: WARREN_ORACLE_SEED=${seed}): warren provisioned\n  ${JSON.stringify(actual)}\ngit's answer is\n  ${JSON.stringify(expected)}\n${describeCase(c)}`,
            );
          }
        }
        // The generator must exercise the interesting part: most cases select something.
        if (ONLY === null) expect(nonEmpty).toBeGreaterThan(seeds.length / 3);
      },
    );
  },
);

function describeCase(c: Case): string {
  return [
    `.gitignore: ${JSON.stringify(c.gitignore)}`,
    c.nestedIgnore ? `${c.nestedIgnore.dir}/.gitignore: ${JSON.stringify(c.nestedIgnore.text)}` : '',
    `.worktreeinclude: ${JSON.stringify(c.include)}`,
    `files: ${JSON.stringify(c.files)}`,
    c.links.length ? `links: ${JSON.stringify(c.links)}` : '',
    c.nestedRepos.length ? `nested repositories: ${JSON.stringify(c.nestedRepos)}` : '',
    c.hgDirs.length ? `.hg: ${JSON.stringify(c.hgDirs)}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

describe('.worktreeinclude cases where warren used to differ from git', () => {
  // Each row: the tree, the include file, and what git says. The oracle above covers the rest.
  const cases: {
    name: string;
    gitignore: string;
    include: string;
    tracked?: Record<string, string>;
    untracked: string[];
    want: string[];
  }[] = [
    {
      name: 'a listed file whose folder the workspace lacks',
      gitignore: 'cache/\n',
      include: 'cache/data.json\n',
      untracked: ['cache/data.json', 'cache/other.json'],
      want: ['cache/data.json'],
    },
    {
      name: 'a glob inside a wholly ignored folder',
      gitignore: 'config/\n',
      include: 'config/*.json\n',
      untracked: ['config/a.json', 'config/b.txt'],
      want: ['config/a.json'],
    },
    {
      name: '** into a wholly ignored folder',
      gitignore: '.claude/\n',
      include: '**/.claude/settings.local.json\n',
      untracked: ['.claude/settings.local.json', '.claude/other.json'],
      want: ['.claude/settings.local.json'],
    },
    {
      name: 'logs/**',
      gitignore: 'logs/\n',
      include: 'logs/**\n',
      untracked: ['logs/a/x.log', 'logs/y.log'],
      want: ['logs/a/x.log', 'logs/y.log'],
    },
    {
      name: 'node_modules/* less one',
      gitignore: 'node_modules/\n',
      include: 'node_modules/*\n!node_modules/big\n',
      untracked: ['node_modules/big/i.js', 'node_modules/small/i.js', 'node_modules/.package-lock.json'],
      want: ['node_modules/.package-lock.json', 'node_modules/small/i.js'],
    },
    {
      name: 'a later ! excludes an earlier literal',
      gitignore: '.env*\n',
      include: '.env.secret\n.env.local\n!.env.secret\n',
      untracked: ['.env.secret', '.env.local'],
      want: ['.env.local'],
    },
    {
      name: 'a folder that also holds a tracked file',
      gitignore: 'cache/*\n!cache/keep\n',
      include: 'cache/\n',
      tracked: { 'cache/keep': 'tracked\n' },
      untracked: ['cache/a', 'cache/b/c'],
      want: ['cache/a', 'cache/b/c'],
    },
    {
      name: 'leading spaces are part of the pattern',
      gitignore: '*.log\n',
      include: ' x.log\n',
      untracked: ['x.log'],
      want: [],
    },
    {
      name: 'a tracked file is never included',
      gitignore: 'cache/\n',
      include: 'cache/\n',
      tracked: { 'cache/forced': 'forced\n' },
      untracked: ['cache/a'],
      want: ['cache/a'],
    },
  ];
  for (const t of cases) {
    it(t.name, async () => {
      const repo = makeRepo({
        files: { '.gitignore': t.gitignore, '.worktreeinclude': t.include, 'README.md': 'x\n' },
      });
      for (const [rel, text] of Object.entries(t.tracked ?? {})) {
        repo.write(rel, text);
        repo.git('add', '-f', '--', rel);
      }
      repo.git('commit', '-q', '--allow-empty', '-m', 'tracked');
      for (const rel of t.untracked) repo.write(rel, `${rel}\n`);
      expect(gitsAnswer(repo.root)).toEqual(t.want);
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      expect(provisionedFiles(made.json.path)).toEqual(t.want);
      for (const rel of t.want) expect(fs.readFileSync(path.join(made.json.path, rel), 'utf8')).toBe(`${rel}\n`);
    });
  }
});

describe('what .worktreeinclude selects inside one folder is one copy', () => {
  it('copies the paths of a folder by one cp, records each, and keeps the budget per path when the group goes over it', async () => {
    const repo = makeRepo({
      files: {
        '.gitignore': 'cache/*\n!cache/tracked\n',
        '.worktreeinclude': 'cache/\n',
        'cache/tracked': 'tracked\n',
        'warren.yaml': 'provision_budget: { entries: 3 }\n',
      },
    });
    repo.write('cache/a', 'a\n');
    for (const f of ['x', 'y', 'z']) repo.write(`cache/b/${f}`, `${f}\n`);
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
    expect(made.code, made.stderr).toBe(0);
    const shown = await repo.warrenJson<{
      data: { provision: { path: string }[]; provisionSkips: { path: string; reason: string }[] };
    }>('show', 'a');
    expect(shown.json.data.provision.map((r) => r.path)).toEqual(['cache/a']);
    expect(shown.json.data.provisionSkips).toEqual([
      expect.objectContaining({ path: 'cache/b', reason: 'over-budget' }),
    ]);
    expect(provisionedFiles(made.json.path)).toEqual(['cache/a']);
    // Within the budget, both come in one group.
    repo.write('warren.yaml', '');
    const b = await repo.warrenJson<{ path: string }>('new', 'feat', 'b');
    expect(provisionedFiles(b.json.path)).toEqual(['cache/a', 'cache/b/x', 'cache/b/y', 'cache/b/z']);
  });
});
