import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { unavailable } from './helpers/capabilities.js';
import { nobodyRepo, shellAsNobody, type NobodyRepo } from './helpers/nobody.js';
import { stopPodmanServices } from './helpers/procs.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, gitIn, makeRepo, runCli, runWarren, tmpDir, type TestRepo } from './helpers/repo.js';

/**
 * The agent is the attacker. A scripted hostile agent — shell scripts run through the real CLI,
 * supervisor and bwrap sandbox, as root and as a user — tries each way out that was found, and
 * others of the same classes; the host then checks that nothing got through. The suite counts
 * what it tried and what held (artifacts/agent-boundary.md) and fails on any escape.
 */

const noBwrap = unavailable(import.meta.filename, 'bwrap');
const noPodman = unavailable(import.meta.filename, 'podman');
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

function describeArena(who: string, skip: string | null, open: () => Promise<Arena>, kind = 'bwrap'): void {
  describe.skipIf(skip !== null)(`a hostile agent in a ${kind} sandbox, as ${who}`, () => {
    it(`tries every escape; every one holds (${ATTEMPTS.length} attempts)`, { timeout: 300_000 }, async () => {
      const arena = await open();
      const through: string[] = [];
      for (const attempt of ATTEMPTS) {
        await arena.run(attempt.script(arena));
        const held = attempt.held(arena);
        outcomes.push({
          who: kind === 'bwrap' ? who : `${who} (${kind})`,
          klass: attempt.klass,
          name: attempt.name,
          held,
        });
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

/** The same attempts against each sandbox kind, as root and as an ordinary user. */
const arenaAsRoot = (kind: 'bwrap' | 'container') => async (): Promise<Arena> => {
  const repo: TestRepo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': `sandbox: ${kind}\n` } });
  // The tasks' containers go with the test (their folders do).
  if (kind === 'container')
    onTestFinished(
      () => void spawnSync('podman', ['rm', '-f', '-t', '0', '--filter', `label=warren.home=${repo.home}`]),
    );
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
};

const arenaAsNobody = (kind: 'bwrap' | 'container') => async (): Promise<Arena> => {
  const repo: NobodyRepo = nobodyRepo((root) => {
    fs.writeFileSync(path.join(root, 'README.md'), '# main\n');
    fs.writeFileSync(path.join(root, 'warren.yaml'), `sandbox: ${kind}\n`);
  });
  // Rootless: the user's own podman, whose storage is under its HOME (repo.home), removes them.
  if (kind === 'container') {
    onTestFinished(
      () => void shellAsNobody('/', `HOME=${repo.home} podman rm -f -t 0 --filter label=warren.home=${repo.home}`),
    );
    // Run first (the last registered): the API service warren started goes before its home does.
    onTestFinished(() => stopPodmanServices(repo.home));
  }
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
};

describeArena('root', noBwrap, arenaAsRoot('bwrap'));
describeArena('uid 65534', noBwrap ?? noNobody, arenaAsNobody('bwrap'));
// sandbox: container (src/run/container/): the task's long-lived podman container, rootful as root, rootless as a user.
describeArena('root', noPodman, arenaAsRoot('container'), 'container');
describeArena('uid 65534', noPodman ?? noNobody, arenaAsNobody('container'), 'container');

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

/**
 * `warren checkpoint` after a hostile agent, as root and as uid 65534. The main checkout's
 * pre-commit calls `npm run lint`: the agent's package.json says what that runs, which must run
 * in its sandbox, never on the host. And the agent's git directory is writable in its sandbox:
 * a link it leaves where git writes by name (COMMIT_EDITMSG, logs/HEAD) must not make the user's
 * checkpoint rewrite the link's target.
 */
interface CheckpointArena {
  who: string;
  workspace: string;
  gitDir: string;
  /** A folder of the user's on the host, outside the workspace: the agent's script writes a marker there if it can. */
  outside: string;
  /** A file of the user's outside the workspace (their authorized_keys, /etc/passwd): it must stay as it is. */
  sentinel: string;
  /** Runs `script` in the task's sandbox. */
  agent(script: string): Promise<void>;
  warren(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

const PACKAGE = (lint: string) => `${JSON.stringify({ name: 'app', private: true, scripts: { lint } })}\n`;
const LINT_HOOK = '#!/bin/sh\nnpm run lint\n';
const SENTINEL = 'user:x:1000:1000::/home/user:/bin/sh\n';

async function rootCheckpointArena(): Promise<CheckpointArena> {
  const repo = makeRepo({
    files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n', 'package.json': PACKAGE('true') },
  });
  fs.writeFileSync(path.join(repo.root, '.git/hooks/pre-commit'), LINT_HOOK, { mode: 0o755 });
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
  expect(made.code, made.stderr).toBe(0);
  const outside = tmpDir('warren-host-');
  const sentinel = path.join(outside, 'passwd');
  fs.writeFileSync(sentinel, SENTINEL);
  return {
    who: 'root',
    workspace: made.json.path,
    gitDir: gitDirOf(made.json.path),
    outside,
    sentinel,
    async agent(script) {
      const r = await repo.warren('exec', 'agent', '--', 'sh', '-c', script);
      expect(r.code, r.stderr).toBe(0);
    },
    warren: (...args) => repo.warren(...args),
  };
}

function nobodyCheckpointArena(): CheckpointArena {
  const repo = nobodyRepo((root) => {
    fs.writeFileSync(path.join(root, 'README.md'), '# main\n');
    fs.writeFileSync(path.join(root, 'warren.yaml'), 'sandbox: bwrap\n');
    fs.writeFileSync(path.join(root, 'package.json'), PACKAGE('true'));
    fs.writeFileSync(path.join(root, '.git/hooks/pre-commit'), LINT_HOOK, { mode: 0o755 });
  });
  const made = repo.json<{ path: string }>(['new', 'feat', 'agent']);
  const outside = path.join(repo.base, 'outside');
  fs.mkdirSync(outside);
  const sentinel = path.join(outside, 'authorized_keys');
  fs.writeFileSync(sentinel, SENTINEL);
  fs.chownSync(outside, 65534, 65534);
  fs.chownSync(sentinel, 65534, 65534);
  return {
    who: 'uid 65534',
    workspace: made.path,
    gitDir: gitDirOf(made.path),
    outside,
    sentinel,
    agent(script) {
      const r = repo.warren(['exec', 'agent', '--', 'sh', '-c', script]);
      expect(r.code, r.stderr).toBe(0);
      return Promise.resolve();
    },
    warren: (...args) => Promise.resolve(repo.warren(args)),
  };
}

describe.skipIf(noBwrap !== null)('warren checkpoint after a hostile agent', () => {
  const arenas: [string, string | null, () => Promise<CheckpointArena> | CheckpointArena][] = [
    ['root', null, rootCheckpointArena],
    ['uid 65534', noNobody, nobodyCheckpointArena],
  ];
  for (const [who, skip, open] of arenas) {
    describe.skipIf(skip !== null)(`as ${who}`, () => {
      it("the main checkout's pre-commit runs the agent's `npm run lint` in the sandbox, not on the host", async () => {
        const a = await open();
        const marker = path.join(a.outside, 'ran-on-the-host');
        const inside = path.join(a.workspace, '.lint-ran');
        fs.writeFileSync(
          path.join(a.workspace, 'package.json'),
          PACKAGE(`touch ${inside}; echo pwned > ${marker}; true`),
        );
        const r = await a.warren('--json', 'checkpoint', 'agent', '-m', 'work');
        const held = !fs.existsSync(marker);
        outcomes.push({ who, klass: 'checkpoint', name: "the pre-commit hook runs the agent's npm script", held });
        expect(held, "the agent's lint script ran on the host").toBe(true);
        expect(fs.existsSync(inside), `the hook did not run: ${r.stderr}`).toBe(true);
        expect(r.code, r.stdout + r.stderr).toBe(0);
      });

      it.each([
        { name: 'COMMIT_EDITMSG and logs/HEAD made links to a file of the user, before the checkpoint', during: false },
        { name: 'COMMIT_EDITMSG made a link by the npm script the pre-commit hook runs', during: true },
      ])('$name: the file stays as it was, and the checkpoint is refused (WORKSPACE_TAMPERED)', async ({ during }) => {
        const a = await open();
        const plant = `ln -sf ${a.sentinel} ${a.gitDir}/COMMIT_EDITMSG`;
        if (during) {
          fs.writeFileSync(path.join(a.workspace, 'package.json'), PACKAGE(plant));
        } else {
          await a.agent(`${plant} && rm -f ${a.gitDir}/logs/HEAD && ln -s ${a.sentinel} ${a.gitDir}/logs/HEAD`);
          fs.writeFileSync(path.join(a.workspace, 'work.txt'), 'work\n');
        }
        const r = await a.warren('--json', 'checkpoint', 'agent', '-m', 'work');
        const held = fs.readFileSync(a.sentinel, 'utf8') === SENTINEL;
        outcomes.push({
          who,
          klass: 'checkpoint',
          name: during
            ? 'git writes through a link at COMMIT_EDITMSG that the hook planted'
            : 'git writes through links at COMMIT_EDITMSG and logs/HEAD',
          held,
        });
        expect(held, 'the checkpoint wrote through the link').toBe(true);
        expect(r.code, r.stdout).toBe(1);
        const error = (JSON.parse(r.stdout) as { error: { code: string; message: string; hint: string } }).error;
        expect(error.code).toBe('WORKSPACE_TAMPERED');
        expect(error.message).toContain(`${a.gitDir}/COMMIT_EDITMSG is a link to ${a.sentinel}`);
        expect(error.message).toMatch(/nothing was changed/);
        expect(error.hint).toContain(`rm ${a.gitDir}/COMMIT_EDITMSG`);
      });
    });
  }
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

/** An MCP client of `warren mcp ...args`, the real server process. */
async function mcpClient(
  repo: TestRepo,
  args: string[] = [],
  env: Record<string, string> = {},
  cwd = repo.root,
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    cwd,
    env: { ...(process.env as Record<string, string>), WARREN_HOME: repo.home, ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'hostile-agent', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}

async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; data: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
  return { isError: r.isError === true, data: JSON.parse(r.content[0]?.text ?? 'null') as never };
}

describe('an agent that drives warren over MCP', () => {
  it("MCP's land joins the merge queue: a gate that fails bounces it, and the base does not move", async () => {
    const repo = makeRepo({
      files: { 'README.md': '# main\n', 'warren.yaml': 'verify:\n  - { id: gate, run: "false" }\n' },
    });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    fs.writeFileSync(path.join(made.json.path, 'work.txt'), 'work\n');
    expect((await repo.warren('checkpoint', 'agent', '-m', 'work')).code).toBe(0);
    const before = repo.git('rev-parse', 'main');
    const client = await mcpClient(repo);
    const landed = await callTool(client, 'land', { id: 'agent' });
    const held =
      landed.isError && landed.data.error?.code === 'GATE_FAILED' && repo.git('rev-parse', 'main') === before;
    outcomes.push({ who: 'root', klass: 'gate', name: "MCP's land skips the queue and its gate", held });
    expect(landed.data.error?.code, JSON.stringify(landed.data)).toBe('GATE_FAILED');
    expect(repo.git('rev-parse', 'main')).toBe(before);
  });

  it('`warren mcp --task a` serves a alone: another task and new are refused with OUT_OF_SCOPE, and nothing is done', async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n' } });
    for (const id of ['a', 'b']) expect((await repo.warren('new', 'feat', id)).code).toBe(0);
    const b = path.join(repo.home, 'marker-in-b');
    const client = await mcpClient(repo, ['--task', 'a']);
    const tries: [string, Record<string, unknown>][] = [
      ['exec', { id: 'b', command: ['touch', b] }],
      ['new', { type: 'feat', id: 'c' }],
      ['rm', { id: 'b' }],
      ['land', { id: 'b' }],
      ['show', { id: 'b' }],
    ];
    for (const [tool, args] of tries) {
      const r = await callTool(client, tool, args);
      const held = r.isError && r.data.error?.code === 'OUT_OF_SCOPE';
      outcomes.push({ who: 'root', klass: 'scope', name: `mcp --task a: ${tool} ${JSON.stringify(args)}`, held });
      expect(r.data.error?.code, `${tool}: ${JSON.stringify(r.data)}`).toBe('OUT_OF_SCOPE');
      expect(r.data.error?.message).toMatch(/serves task a only.*Nothing was done/);
    }
    expect(fs.existsSync(b)).toBe(false);
    expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['a', 'b']);
    // Its own task, the id left out: served.
    const listed = (await client.callTool({ name: 'list', arguments: {} })) as { content: { text: string }[] };
    expect((JSON.parse(listed.content[0]?.text ?? '[]') as { id: string }[]).map((t) => t.id)).toEqual(['a']);
    const own = await callTool(client, 'exec', { command: ['sh', '-c', 'echo in $WARREN_TASK_ID'] });
    expect(own.data.output).toBe('in a\n');
  });

  it("a `warren mcp` started in task a's workspace (a folder inside it) serves a alone, as --task a does; --task b or --repo into b from there is refused at start", async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n' } });
    for (const id of ['a', 'b']) expect((await repo.warren('new', 'feat', id)).code).toBe(0);
    const paths = new Map<string, string>();
    for (const id of ['a', 'b']) paths.set(id, (await repo.warrenJson<{ path: string }>('path', id)).json.path);
    const ws = (id: string): string => paths.get(id) ?? '';
    const inside = path.join(ws('a'), 'src', 'deep');
    fs.mkdirSync(inside, { recursive: true });
    const marker = path.join(repo.home, 'marker-in-b');
    // Claude Code started by hand in the workspace, running the repository's `warren mcp`: no --task, no WARREN_TASK_ID.
    const client = await mcpClient(repo, [], { WARREN_TASK_ID: '' }, inside);
    const tries: [string, Record<string, unknown>][] = [
      ['exec', { id: 'b', command: ['touch', marker] }],
      ['new', { type: 'feat', id: 'c' }],
      ['rm', { id: 'b' }],
    ];
    for (const [tool, args] of tries) {
      const r = await callTool(client, tool, args);
      const held = r.isError && r.data.error?.code === 'OUT_OF_SCOPE';
      outcomes.push({
        who: 'root',
        klass: 'scope',
        name: `mcp in a's workspace: ${tool} ${JSON.stringify(args)}`,
        held,
      });
      expect(r.data.error?.code, `${tool}: ${JSON.stringify(r.data)}`).toBe('OUT_OF_SCOPE');
      expect(r.data.error?.message).toMatch(/serves task a only.*Nothing was done/);
    }
    expect(fs.existsSync(marker)).toBe(false);
    expect((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id)).toEqual(['a', 'b']);
    const own = await callTool(client, 'exec', { command: ['sh', '-c', 'echo in $WARREN_TASK_ID'] });
    expect(own.data.output).toBe('in a\n');

    // Pointed at b from a's workspace (by --task, or by --repo through a link into b): refused, nothing served.
    const link = path.join(tmpDir('warren-link-'), 'to-b');
    fs.symlinkSync(ws('b'), link);
    for (const [args, cwd] of [
      [['--json', 'mcp', '--task', 'b'], inside],
      [['--json', '--repo', link, 'mcp'], ws('a')],
    ] as const) {
      const r = await runCli(args, { cwd, home: repo.home, env: { WARREN_TASK_ID: '' } });
      const held = r.code === 1 && /"OUT_OF_SCOPE"/.test(r.stdout);
      outcomes.push({ who: 'root', klass: 'scope', name: `warren ${args.join(' ')} in a's workspace`, held });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect((JSON.parse(r.stdout) as { error: { code: string } }).error.code).toBe('OUT_OF_SCOPE');
    }
  });

  it('a `warren mcp` that an agent starts inside a command warren runs for task a is scoped to a', async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n' } });
    for (const id of ['a', 'b']) expect((await repo.warren('new', 'feat', id)).code).toBe(0);
    const marker = path.join(repo.home, 'marker-in-b');
    const sdk = path.resolve(import.meta.dirname, '../node_modules/@modelcontextprotocol/sdk/dist/esm/client');
    // The agent: an MCP client of its own, spawning `warren mcp` with the environment warren gave it.
    const agent = `
      import { Client } from ${JSON.stringify(`${sdk}/index.js`)};
      import { StdioClientTransport } from ${JSON.stringify(`${sdk}/stdio.js`)};
      const client = new Client({ name: 'agent', version: '1' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(BIN)}, 'mcp'], env: process.env }));
      const r = await client.callTool({ name: 'exec', arguments: { id: 'b', command: ['touch', ${JSON.stringify(marker)}] } });
      console.log('RESULT', r.content[0].text.replace(/\\s+/g, ' '));
      await client.close();
    `;
    const ran = await repo.warrenJson<{ log: string }>(
      'exec',
      'a',
      '--',
      process.execPath,
      '--input-type=module',
      '-e',
      agent,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const log = fs.readFileSync(ran.json.log, 'utf8');
    const held = !fs.existsSync(marker) && /OUT_OF_SCOPE/.test(log);
    outcomes.push({ who: 'root', klass: 'scope', name: "an agent's own `warren mcp` drives another task", held });
    expect(log).toMatch(/RESULT .*OUT_OF_SCOPE/);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

/**
 * An agent's edit to warren.yaml's trusted settings (or to .worktreeinclude): the land goes
 * ahead, flagged; after it, no task is made, nothing runs in a task, and nothing lands, until
 * the user trusts the change.
 */
describe("an agent's change to warren.yaml's security settings", () => {
  it.each([
    {
      name: 'sandbox: bwrap → none',
      before: 'sandbox: bwrap\n',
      after: 'sandbox: none\n',
      flag: /sandbox: "bwrap" → \(unset\)/,
    },
    {
      name: 'network: true added',
      before: 'sandbox: bwrap\n',
      after: 'sandbox: bwrap\nnetwork: true\n',
      flag: /network: \(unset\) → true/,
    },
    {
      name: 'protected: deleted',
      before: 'protected: [".env.testing"]\n',
      after: '',
      flag: /protected: \[".env.testing"\] → \(unset\)/,
    },
    {
      name: 'land.gate emptied',
      before: 'verify:\n  - { id: test, run: "true" }\nland: { gate: [test] }\n',
      after: 'verify:\n  - { id: test, run: "true" }\nland: { gate: [] }\n',
      flag: /land\.gate: \["test"\] → \[\]/,
    },
    {
      name: 'the gate emptied by required: false',
      before: 'verify:\n  - { id: test, run: "true" }\n',
      after: 'verify:\n  - { id: test, run: "true", required: false }\n',
      flag: /land\.gate: \(unset\) → \[\]/,
    },
    {
      name: 'sandbox.allow widened',
      before: 'sandbox: { kind: bwrap, allow: ["api.example.com"] }\n',
      after: 'sandbox: { kind: bwrap, allow: ["api.example.com", "*.evil.example"] }\n',
      flag: /sandbox: .*evil/,
    },
    {
      name: "provision shares the user's .env",
      before: '',
      after: 'provision: [{ path: .env, mode: share }]\n',
      flag: /provision: \(unset\) → \[\{"path":".env","mode":"share"\}\]/,
    },
    {
      name: 'a .worktreeinclude naming .env',
      before: '',
      after: '',
      include: '.env\n',
      flag: /\.worktreeinclude: \(unset\) → \[".env"\]/,
    },
    {
      name: 'archive.keep: 1s',
      before: '',
      after: 'archive: { keep: 1s }\n',
      flag: /archive: \(unset\) → \{"keep":"1s"\}/,
    },
  ])('$name: flagged at land, then nothing is made, runs or lands until `warren trust`', async (row) => {
    const { before, after, flag } = row;
    const include = 'include' in row ? row.include : undefined;
    const repo = makeRepo({ files: { 'README.md': '# main\n', '.gitignore': '.env\n', 'warren.yaml': before } });
    fs.writeFileSync(path.join(repo.root, '.env'), `${SECRET('env')}\n`);
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    const next = await repo.warrenJson<{ path: string }>('new', 'feat', 'next', '--no-setup');
    expect(next.code, next.stderr).toBe(0);
    fs.writeFileSync(path.join(made.json.path, 'warren.yaml'), after);
    if (include !== undefined) fs.writeFileSync(path.join(made.json.path, '.worktreeinclude'), include);
    expect((await repo.warren('checkpoint', 'agent', '-m', 'settings')).code).toBe(0);
    const landed = await repo.warren('land', 'agent');
    expect(landed.code, landed.stderr).toBe(0);
    expect(landed.stderr).toMatch(/changes warren\.yaml's security settings/);
    expect(landed.stderr).toMatch(flag);

    // A new task would be made as the new settings say (its provisioned paths among them).
    const third = await repo.warrenJson<{ error: { code: string; message: string } }>(
      'new',
      'feat',
      'third',
      '--no-setup',
    );
    const marker = path.join(next.json.path, 'ran');
    const exec = await repo.warrenJson<{ error: { code: string; message: string } }>(
      'exec',
      'next',
      '--',
      'touch',
      marker,
    );
    fs.writeFileSync(path.join(next.json.path, 'next.txt'), 'next\n');
    const cp = await repo.warren('checkpoint', 'next', '-m', 'next');
    const land = await repo.warrenJson<{ error: { code: string } }>('land', 'next');
    const tasks = (await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id);
    const held =
      third.code === 1 &&
      !tasks.includes('third') &&
      exec.code === 1 &&
      exec.json.error.code === 'UNTRUSTED_COMMANDS' &&
      !fs.existsSync(marker) &&
      land.code === 1;
    outcomes.push({
      who: 'root',
      klass: 'settings',
      name: `a landed ${String(flag)} weakens the next task silently`,
      held,
    });
    expect(third.json.error?.code, third.stdout).toBe('UNTRUSTED_COMMANDS');
    expect(third.json.error.message).toMatch(
      /changed its security settings since you trusted them.*Nothing was created/,
    );
    expect(tasks).not.toContain('third');
    expect(exec.json.error?.code, exec.stdout).toBe('UNTRUSTED_COMMANDS');
    expect(exec.json.error.message).toMatch(/changed its security settings since you trusted them/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(cp.code).toBe(0);
    expect(land.json.error?.code).toBe('UNTRUSTED_COMMANDS');

    expect((await repo.warren('trust', '--yes')).code).toBe(0);
    expect((await repo.warren('exec', 'next', '--', 'touch', marker)).code).toBe(0);
    expect(fs.existsSync(marker)).toBe(true);
  });
});

describe('a landed change never replaces ignored files of the main checkout', () => {
  it.each([
    { name: "a force-added .env over the user's ignored .env", add: '.env', paths: ['.env'] },
    { name: "a tracked file named data over the user's ignored data/ folder", add: 'data', paths: ['data'] },
    { name: 'a file under cache/ where the user has an ignored file named cache', add: 'cache/x', paths: ['cache'] },
  ])('$name: the land bounces, naming it, and nothing is overwritten', async ({ add, paths }) => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', '.gitignore': '.env\ndata/\ncache\n' } });
    fs.writeFileSync(path.join(repo.root, '.env'), `${SECRET('env')}\n`);
    fs.mkdirSync(path.join(repo.root, 'data'));
    fs.writeFileSync(path.join(repo.root, 'data/keep.txt'), `${SECRET('data')}\n`);
    fs.writeFileSync(path.join(repo.root, 'cache'), `${SECRET('cache')}\n`);
    const before = snapshotIgnored(repo.root);
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    // The agent commits on its own branch what checkpoint would not: an ignored path, force-added.
    fs.mkdirSync(path.dirname(path.join(made.json.path, add)), { recursive: true });
    fs.writeFileSync(path.join(made.json.path, add), 'from the agent\n');
    gitIn(made.json.path, 'add', '-f', add);
    gitIn(made.json.path, 'commit', '-q', '-m', 'force-added');
    const mainBefore = repo.git('rev-parse', 'main');
    const landed = await repo.warrenJson<{ error: { code: string; message: string; details: { paths: string[] } } }>(
      'land',
      'agent',
    );
    const held =
      landed.code === 1 && snapshotIgnored(repo.root) === before && repo.git('rev-parse', 'main') === mainBefore;
    outcomes.push({ who: 'root', klass: 'landing', name: `a landed ${add} replaces an ignored path`, held });
    expect(landed.json.error?.code, landed.stdout).toBe('CHECKOUT_DIRTY');
    expect(landed.json.error.details.paths).toEqual(paths);
    expect(landed.json.error.message).toMatch(/ignored .* Nothing was changed/);
    expect(snapshotIgnored(repo.root)).toBe(before);
    expect(repo.git('rev-parse', 'main')).toBe(mainBefore);
  });
});

function snapshotIgnored(root: string): string {
  return ['.env', 'data/keep.txt', 'cache'].map((f) => `${f}=${read(path.join(root, f))}`).join('|');
}

/**
 * Every git key that runs a program (or reads more configuration), written by the agent into
 * its worktree's own configuration (where `extensions.worktreeConfig` is on): the next git call
 * warren makes there for the user runs none of them.
 */
describe('every git key that runs a program, in the configuration an agent can write', () => {
  const KEYS = [
    ['core', 'fsmonitor'],
    ['core', 'hooksPath'],
    ['core', 'sshCommand'],
    ['core', 'pager'],
    ['core', 'editor'],
    ['core', 'askPass'],
    ['core', 'gitProxy'],
    ['core', 'alternateRefsCommand'],
    ['diff', 'external'],
    ['diff "x"', 'textconv'],
    ['diff "x"', 'command'],
    ['merge "x"', 'driver'],
    ['filter "x"', 'clean'],
    ['filter "x"', 'smudge'],
    ['filter "x"', 'process'],
    ['credential', 'helper'],
    ['gpg', 'program'],
    ['gpg "ssh"', 'program'],
    ['sequence', 'editor'],
    ['uploadpack', 'packObjectsHook'],
    ['include', 'path'],
    ['includeIf "gitdir:/"', 'path'],
  ] as const;

  it(`${KEYS.length} keys: warren status refuses each (WORKSPACE_TAMPERED) and runs nothing`, async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n' } });
    repo.git('config', 'extensions.worktreeConfig', 'true');
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    const gitDir = gitDirOf(made.json.path);
    fs.writeFileSync(path.join(made.json.path, '.gitattributes'), '* diff=x merge=x filter=x\n');
    const through: string[] = [];
    for (const [section, key] of KEYS) {
      const marker = path.join(tmpDir('warren-trap-'), 'ran');
      const program = `touch ${marker}; false`;
      const value = key === 'path' ? path.join(path.dirname(marker), 'more.config') : program;
      if (key === 'path') fs.writeFileSync(value, `[core]\n\tfsmonitor = ${program}\n`);
      fs.writeFileSync(path.join(gitDir, 'config.worktree'), `[${section}]\n\t${key} = ${value}\n`);
      const r = await repo.warrenJson<{ error?: { code: string } }>('status', 'agent');
      const held = r.json.error?.code === 'WORKSPACE_TAMPERED' && !fs.existsSync(marker);
      outcomes.push({ who: 'root', klass: 'git keys', name: `${section}.${key} in config.worktree`, held });
      if (!held) through.push(`${section}.${key}: ${r.stdout}`);
    }
    expect(through).toEqual([]);
    fs.writeFileSync(path.join(gitDir, 'config.worktree'), '');
    expect((await repo.warren('status', 'agent')).code).toBe(0);
  });
});

/**
 * Every loopback, private and reserved form an allow list could name, through the real proxy
 * from inside the sandbox: refused with its reason, and the server on the host's loopback never
 * reached. (Only a loopback literal with its port may reach loopback; that is the one way in.)
 */
describe.skipIf(noBwrap !== null)('every loopback and private address form on an allow list', () => {
  it('is refused by the proxy, with its reason', { timeout: 120_000 }, async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end('the host\n');
    });
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '0.0.0.0', () => resolve((server.address() as AddressInfo).port)),
    );
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const forms = [
      '0.0.0.0',
      '[::]',
      '[::ffff:7f00:1]',
      '[::ffff:127.0.0.1]',
      '127.0.0.1.nip.example', // a name that does not resolve: refused too
      os.hostname(), // the machine's own name (on Debian, /etc/hosts maps it to a loopback address)
      '169.254.169.254',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.0.1',
      '100.64.0.1',
      '[fd00::1]',
      '[fe80::1]',
    ];
    const repo = makeRepo({
      files: {
        'README.md': '# main\n',
        'warren.yaml': `sandbox: { kind: bwrap, allow: [${forms.map((f) => JSON.stringify(`${f}:${port}`)).join(', ')}] }\n`,
      },
    });
    expect((await repo.warren('new', 'feat', 'agent')).code).toBe(0);
    for (const form of forms) {
      const url = `http://${form}:${port}/`;
      const script = `require('node:http').get({ host: '127.0.0.1', port: Number(new URL(process.env.HTTP_PROXY).port), path: ${JSON.stringify(url)} }, (r) => { console.log('status', r.statusCode); r.resume(); r.on('end', () => process.exit(0)); }).on('error', (e) => { console.error(e.message); process.exit(3); })`;
      const r = await repo.warrenJson<{ log: string }>('exec', 'agent', '--', process.execPath, '-e', script);
      const status = /status (\d+)/.exec(read(r.json.log))?.[1];
      const held = status === '403' && hits === 0;
      outcomes.push({ who: 'root', klass: 'egress', name: `allow: ${form}:PORT`, held });
      expect(status, `${form}: ${read(r.json.log)}`).toBe('403');
    }
    expect(hits).toBe(0);
    const shown = await repo.warrenJson<{ events: { kind: string; reason?: string }[] }>(
      'show',
      'agent',
      '--events',
      '200',
    );
    const reasons = shown.json.events.filter((e) => e.kind === 'sandbox.egress_refused').map((e) => e.reason ?? '');
    expect(reasons.length).toBe(forms.length);
    for (const reason of reasons)
      expect(reason).toMatch(/loopback, private or link-local|does not resolve|resolves to no address/);
  });
});
