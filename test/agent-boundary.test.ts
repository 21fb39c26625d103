import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unavailable } from './helpers/capabilities.js';
import { nobodyRepo, type NobodyRepo } from './helpers/nobody.js';
import { makeRepo, runWarren, tmpDir, type TestRepo } from './helpers/repo.js';

/**
 * The agent is the attacker. A scripted hostile agent — shell scripts run through the real CLI,
 * supervisor and bwrap sandbox, as root and as a user — tries each way out that was found, and
 * others of the same classes; the host then checks that nothing got through. The suite counts
 * what it tried and what held (artifacts/agent-boundary.md) and fails on any escape.
 */

const noBwrap = unavailable(import.meta.filename, 'bwrap');
const noNobody = unavailable(import.meta.filename, 'nobody');

interface Outcome {
  who: string;
  klass: string;
  name: string;
  held: boolean;
}
const outcomes: Outcome[] = [];

afterAll(() => {
  if (outcomes.length === 0) return;
  const held = outcomes.filter((o) => o.held).length;
  const rows = outcomes.map((o) => `| ${o.who} | ${o.klass} | ${o.name} | ${o.held ? 'held' : 'GOT THROUGH'} |`);
  const text = [
    '| as | class | attempt | result |',
    '|---|---|---|---|',
    ...rows,
    '',
    `agent boundary: ${outcomes.length} attempt(s) tried, ${held} held, ${outcomes.length - held} got through`,
    '',
  ].join('\n');
  const dir = path.resolve(import.meta.dirname, '../artifacts');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'agent-boundary.md'), text);
  console.log(text);
});

/** A secret a file holds: it must never reach the workspace. */
const SECRET = (what: string) => `SECRET-${what}-4f1c2e`;

/** Where the attacker sits: a sandboxed task's workspace, with everything the host checks afterwards. */
interface Arena {
  who: string;
  /** Runs `script` inside task `agent`, sandboxed; resolves when it ended (its exit status is the agent's business). */
  run(script: string): Promise<void>;
  workspace: string;
  other: string;
  main: string;
  home: string;
  warrenHome: string;
  /** The task's private git directory. */
  gitDir: string;
}

function secretFiles(home: string, warrenHome: string, project: string): Record<string, string> {
  return {
    [path.join(home, '.ssh/id_ed25519')]: SECRET('ssh'),
    [path.join(home, '.aws/credentials')]: SECRET('aws'),
    [path.join(home, '.config/gh/hosts.yml')]: SECRET('gh'),
    [path.join(home, '.npmrc')]: SECRET('npmrc'),
    [path.join(home, '.netrc')]: SECRET('netrc'),
    [path.join(home, '.cargo/credentials.toml')]: SECRET('cargo'),
    [path.join(warrenHome, 'policy/signing.key')]: SECRET('policy-key'),
    [path.join(warrenHome, 'logs', project, 'other/agents/claude/.credentials.json')]: SECRET('other-agent'),
  };
}

function plant(files: Record<string, string>): void {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${content}\n`, { mode: 0o600 });
  }
}

/** The escapes, each a script for the agent and what the host checks afterwards: true when it held. */
interface Attempt {
  klass: string;
  name: string;
  script(a: Arena): string;
  held(a: Arena): boolean;
}

const read = (file: string): string => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
const mark = (a: Arena, name: string): string => path.join(a.workspace, `.attempt-${name}`);
const marked = (a: Arena, name: string): boolean => fs.existsSync(mark(a, name));

const ATTEMPTS: readonly Attempt[] = [
  {
    klass: 'capabilities',
    name: 'no capability at all, the bounding set included',
    script: (a) => `grep -E '^Cap(Eff|Prm|Bnd|Amb):' /proc/self/status > ${mark(a, 'caps')}`,
    held: (a) => {
      const caps = read(mark(a, 'caps'));
      return caps !== '' && [...caps.matchAll(/:\s*([0-9a-f]+)/g)].every((m) => /^0+$/.test(m[1] ?? ''));
    },
  },
  {
    klass: 'mounts',
    name: 'remount / read-write and write the main checkout',
    script: (a) => `mount -o remount,rw / 2>/dev/null; echo pwned >> ${a.main}/README.md 2>/dev/null`,
    held: (a) => read(path.join(a.main, 'README.md')) === '# main\n',
  },
  {
    klass: 'mounts',
    name: 'mount a tmpfs',
    script: (a) => `mount -t tmpfs none /mnt 2>/dev/null && touch ${mark(a, 'mount')}`,
    held: (a) => !marked(a, 'mount'),
  },
  {
    klass: 'mounts',
    name: "unmount /proc to see the host's processes",
    script: (a) => `umount /proc 2>/dev/null && touch ${mark(a, 'umount')}; cat /proc/1/comm > ${mark(a, 'comm')}`,
    held: (a) =>
      !marked(a, 'umount') && read(mark(a, 'comm')).trim() !== fs.readFileSync('/proc/1/comm', 'utf8').trim(),
  },
  {
    klass: 'mounts',
    name: 'unmount the masks over the home folder and WARREN_HOME',
    script: (a) =>
      `umount -l ${a.home} 2>/dev/null; umount -l ${a.warrenHome} 2>/dev/null; cat ${a.home}/.ssh/id_ed25519 > ${mark(a, 'unmask')} 2>/dev/null`,
    held: (a) => !read(mark(a, 'unmask')).includes('SECRET'),
  },
  {
    klass: 'devices',
    name: 'make a raw block device',
    script: (a) => `mknod ${path.join(a.workspace, 'rawdisk')} b 8 0 2>/dev/null && touch ${mark(a, 'mknod')}`,
    held: (a) => !marked(a, 'mknod'),
  },
  {
    klass: 'modules',
    name: 'load a kernel module (init_module: EPERM without the capability, EFAULT with it; ENOSYS where the kernel loads none)',
    script: (a) =>
      `python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); libc.syscall(175, None, 0, b""); print(ctypes.get_errno())' > ${mark(a, 'module')}`,
    held: (a) => ['1', '38'].includes(read(mark(a, 'module')).trim()),
  },
  {
    klass: 'secrets',
    name: "read the home folder's credentials, WARREN_HOME's policy key and another task's agent login",
    script: (a) =>
      ['.ssh/id_ed25519', '.aws/credentials', '.config/gh/hosts.yml', '.npmrc', '.netrc', '.cargo/credentials.toml']
        .map((f) => path.join(a.home, f))
        .concat([path.join(a.warrenHome, 'policy/signing.key')])
        .concat(
          fs
            .readdirSync(path.join(a.warrenHome, 'logs'))
            .map((p) => path.join(a.warrenHome, 'logs', p, 'other/agents/claude/.credentials.json')),
        )
        .map((f) => `cat ${f} >> ${mark(a, 'secrets')} 2>/dev/null`)
        .join('; '),
    held: (a) => !read(mark(a, 'secrets')).includes('SECRET'),
  },
  {
    klass: 'secrets',
    name: 'read the state database',
    script: (a) => `head -c 100 ${path.join(a.warrenHome, 'state.db')} > ${mark(a, 'db')} 2>/dev/null`,
    held: (a) => !read(mark(a, 'db')).includes('SQLite'),
  },
  {
    klass: 'other tasks',
    name: "read another task's workspace",
    script: (a) => `cat ${path.join(a.other, 'mine.txt')} > ${mark(a, 'other-read')} 2>/dev/null`,
    held: (a) => !read(mark(a, 'other-read')).includes('SECRET'),
  },
  {
    klass: 'other tasks',
    name: "write another task's workspace",
    script: (a) => `echo pwned > ${path.join(a.other, 'from-agent.txt')} 2>/dev/null`,
    held: (a) => !fs.existsSync(path.join(a.other, 'from-agent.txt')),
  },
  {
    klass: 'git',
    name: "point the workspace's .git file at a git directory of the agent's own",
    script: (a) => `printf 'gitdir: ${a.workspace}/evil\\n' > ${path.join(a.workspace, '.git')} 2>/dev/null`,
    held: (a) => read(path.join(a.workspace, '.git')).trim() === `gitdir: ${a.gitDir}`,
  },
  {
    klass: 'git',
    name: "rewrite the worktree's commondir",
    script: (a) => `echo ${a.workspace}/evil > ${path.join(a.gitDir, 'commondir')} 2>/dev/null`,
    held: (a) => !read(path.join(a.gitDir, 'commondir')).includes('evil'),
  },
  {
    klass: 'git',
    name: 'write core.fsmonitor into config.worktree',
    script: (a) =>
      `printf '[core]\\n\\tfsmonitor = touch /tmp/warren-pwned\\n' > ${path.join(a.gitDir, 'config.worktree')} 2>/dev/null`,
    held: (a) => !read(path.join(a.gitDir, 'config.worktree')).includes('fsmonitor'),
  },
  {
    klass: 'git',
    name: "rewrite the worktree's gitdir record",
    script: (a) => `echo /elsewhere/.git > ${path.join(a.gitDir, 'gitdir')} 2>/dev/null`,
    held: (a) => read(path.join(a.gitDir, 'gitdir')).trim() === path.join(a.workspace, '.git'),
  },
];

function describeArena(who: string, skip: string | null, open: () => Promise<Arena>): void {
  describe.skipIf(skip !== null)(`a hostile agent in a bwrap sandbox, as ${who}`, () => {
    it(`tries every escape; every one holds (${ATTEMPTS.length} attempts)`, { timeout: 300_000 }, async () => {
      const arena = await open();
      const through: string[] = [];
      for (const attempt of ATTEMPTS) {
        await arena.run(attempt.script(arena));
        const held = attempt.held(arena);
        outcomes.push({ who, klass: attempt.klass, name: attempt.name, held });
        if (!held) through.push(`${attempt.klass}: ${attempt.name}`);
      }
      expect(through, `${who}: what got through`).toEqual([]);
    });
  });
}

/** The private git directory a workspace's `.git` file names (read before the agent ran). */
function gitDirOf(workspace: string): string {
  return /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(path.join(workspace, '.git'), 'utf8'))?.[1]?.trim() ?? '';
}

describeArena('root', noBwrap, async () => {
  const repo: TestRepo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
  const home = tmpDir('warren-home-of-');
  const agent = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
  const other = await repo.warrenJson<{ path: string }>('new', 'feat', 'other');
  expect(agent.code, agent.stderr).toBe(0);
  fs.writeFileSync(path.join(other.json.path, 'mine.txt'), `${SECRET('other-workspace')}\n`);
  const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
  plant(secretFiles(home, repo.home, project));
  return {
    who: 'root',
    workspace: agent.json.path,
    other: other.json.path,
    main: repo.root,
    home,
    warrenHome: repo.home,
    gitDir: gitDirOf(agent.json.path),
    async run(script) {
      // The user's home is `home`: warren and the agent see it as theirs.
      const r = await runWarren(['exec', 'agent', '--', 'sh', '-c', script], {
        cwd: repo.root,
        home: repo.home,
        env: { HOME: home },
      });
      if (r.code === 125) throw new Error(`the sandbox did not start: ${r.stderr}`);
    },
  };
});

describeArena('uid 65534', noBwrap ?? noNobody, async () => {
  const repo: NobodyRepo = nobodyRepo((root) => {
    fs.writeFileSync(path.join(root, 'README.md'), '# main\n');
    fs.writeFileSync(path.join(root, 'warren.yaml'), 'sandbox: bwrap\n');
  });
  const agent = repo.json<{ path: string }>(['new', 'feat', 'agent']);
  const other = repo.json<{ path: string }>(['new', 'feat', 'other']);
  const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
  plant({
    [path.join(other.path, 'mine.txt')]: SECRET('other-workspace'),
    ...secretFiles(repo.home, repo.home, project),
  });
  fs.chownSync(path.join(other.path, 'mine.txt'), 65534, 65534);
  for (const [file] of Object.entries(secretFiles(repo.home, repo.home, project))) {
    for (let p = file; p.startsWith(repo.home) && p !== repo.home; p = path.dirname(p)) fs.chownSync(p, 65534, 65534);
  }
  return {
    who: 'uid 65534',
    workspace: agent.path,
    other: other.path,
    main: repo.root,
    home: repo.home,
    warrenHome: repo.home,
    gitDir: gitDirOf(agent.path),
    async run(script) {
      const r = repo.warren(['exec', 'agent', '--', 'sh', '-c', script]);
      if (r.code === 125) throw new Error(`the sandbox did not start: ${r.stderr}`);
    },
  };
});

/**
 * What warren writes after the agent ran, where the agent could have left a link: its state
 * folder (seeded before each `warren run`), its git directory's config.worktree (made empty
 * before a sandboxed run). The agent is a fake CLI on PATH that plants the link during run 1,
 * in the sandbox; run 2 must write nothing through it.
 */
describe.skipIf(noBwrap !== null)("warren's own writes follow no link the agent left", () => {
  function fakeAgent(ws: string, name: string, script: string): string {
    const bin = path.join(ws, '.fake-bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${script}\nexit 0\n`, { mode: 0o755 });
    return bin;
  }

  it.each([
    {
      agent: 'claude',
      name: "claude's settings.json made a link to a file of the main checkout",
      plant: (target: string) => `ln -sf ${target}/README.md "$CLAUDE_CONFIG_DIR/settings.json"`,
      user: (home: string) => path.join(home, '.claude/settings.json'),
      replaced: /settings\.json in the task's state folder was a symlink to/,
    },
    {
      agent: 'gemini',
      name: "gemini's .gemini folder made a link to the main checkout",
      plant: (target: string) => `rm -rf "$GEMINI_CLI_HOME/.gemini"; ln -s ${target} "$GEMINI_CLI_HOME/.gemini"`,
      user: (home: string) => path.join(home, '.gemini/settings.json'),
      replaced: /\.gemini in the task's state folder was a symlink to/,
    },
  ])(
    '$name: the next run replaces the link and writes nothing through it',
    async ({ agent, plant, user, replaced }) => {
      const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
      const home = tmpDir('warren-home-of-');
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
      expect(made.code, made.stderr).toBe(0);
      const settings = user(home);
      fs.mkdirSync(path.dirname(settings), { recursive: true });
      fs.writeFileSync(settings, '{"from":"the user"}\n');
      const bin = fakeAgent(made.json.path, agent, plant(repo.root));
      const env = { HOME: home, PATH: `${bin}:${process.env.PATH ?? ''}` };
      const run = (n: number) =>
        runWarren(['--json', 'run', 'agent', '--agent', agent, '--prompt', `run ${n}`], {
          cwd: repo.root,
          home: repo.home,
          env,
        });
      const first = await run(1);
      expect(first.code, first.stderr).toBe(0);
      // The user's settings changed since: the next run seeds them again.
      const later = new Date(Date.now() + 60_000);
      fs.utimesSync(settings, later, later);
      const second = await run(2);
      expect(second.code, second.stderr).toBe(0);
      const held =
        fs.readFileSync(path.join(repo.root, 'README.md'), 'utf8') === '# main\n' &&
        !fs.existsSync(path.join(repo.root, 'settings.json')) &&
        (fs.statSync(path.join(repo.root, 'README.md')).mode & 0o777) !== 0o600;
      outcomes.push({ who: 'root', klass: "warren's writes", name: `${agent}: ${plant('MAIN')}`, held });
      expect(held, 'warren wrote through the link into the main checkout').toBe(true);
      const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>(
        'show',
        'agent',
        '--events',
        '50',
      );
      expect(shown.json.events.filter((e) => e.kind === 'agent.link_replaced').map((e) => e.message)).toEqual([
        expect.stringMatching(replaced),
      ]);
    },
  );

  it("a dangling link at config.worktree: the sandbox's empty file is made beside nothing, the link's target is not created", async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    const gitDir = gitDirOf(made.json.path);
    const target = path.join(tmpDir('warren-target-'), 'created-by-warren');
    fs.rmSync(path.join(gitDir, 'config.worktree'), { force: true });
    fs.symlinkSync(target, path.join(gitDir, 'config.worktree'));
    const r = await repo.warren('exec', 'agent', '--', 'true');
    const held = !fs.existsSync(target);
    outcomes.push({ who: 'root', klass: "warren's writes", name: 'a dangling link at config.worktree', held });
    expect(held, `warren created ${target} through the link`).toBe(true);
    // The link is refused by the pin before anything runs: config.worktree is not a git configuration file.
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/config\.worktree/);
  });
});

/** Past the gate: what an agent's branch can make the merge queue run, and with what. */
describe.skipIf(noBwrap !== null)('the gate an agent cannot talk its way past', () => {
  it('a task made --sandbox bwrap has its own edited test run by the gate in bwrap, where warren.yaml names no sandbox', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# main\n',
        'test.sh': 'exit 0\n',
        'warren.yaml': 'verify:\n  - { id: test, run: sh test.sh }\n',
      },
    });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent', '--sandbox', 'bwrap');
    expect(made.code, made.stderr).toBe(0);
    const marker = path.join(tmpDir('warren-gate-'), 'ran-on-the-host');
    // The agent's edit: the gate runs it on the integrated commit.
    fs.writeFileSync(path.join(made.json.path, 'test.sh'), `echo pwned > ${marker}\nexit 0\n`);
    expect((await repo.warren('checkpoint', 'agent', '-m', 'tests')).code).toBe(0);
    const landed = await repo.warren('land', 'agent');
    expect(landed.code, landed.stderr).toBe(0);
    const held = !fs.existsSync(marker);
    outcomes.push({ who: 'root', klass: 'gate', name: "the gate drops the task's sandbox", held });
    expect(held, "the gate ran the agent's test.sh unsandboxed").toBe(true);
    expect(landed.stderr).toMatch(/gate test on agent \(run 1, sandbox bwrap\)/);
  });
});
