import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { buildAgentInvocation, CLAUDE_FINAL_SETTINGS, isResumable, type AgentRequest } from '../../src/run/agents.js';
import { commandArgv } from '../../src/run/commands.js';
import { containedArgv, type Containment } from '../../src/system/containment.js';
import { commandCandidates } from '../../src/run/command-lookup.js';
import { checkPolicy, type Policy } from '../../src/run/policy.js';
import { findFreeRun } from '../../src/run/ports.js';
import { parseProcNetTcp } from '../../src/system/proc.js';
import {
  MOUNT_FAILED_STATUS,
  mountFailureReason,
  NOT_FOUND_STATUS,
  type RunMount,
} from '../../src/system/run-mounts.js';
import { classifyRisk } from '../../src/run/risk.js';
import { sandboxArgv, sandboxFailureReason } from '../../src/run/sandbox.js';
import { SANDBOX_UID, Staging, uidHolder } from '../../src/system/sandbox-uid.js';
import { assertRunnable, dbNameFor } from '../../src/run/task-env.js';
import type { Task, TaskState } from '../../src/state/types.js';

/** The deciding logic of src/run/, on plain data. */

describe('parseProcNetTcp', () => {
  it('keeps LISTEN sockets and decodes v4 and v6 addresses', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0',
      '   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 100 0 0 10 0',
      '   2: 0100007F:4E21 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0',
      '   3: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 4444 1',
    ].join('\n');
    expect(parseProcNetTcp(text)).toEqual([
      { inode: 1111, address: '127.0.0.1', port: 20000 },
      { inode: 2222, address: '0.0.0.0', port: 22 },
      { inode: 4444, address: '::1', port: 8080 },
    ]);
  });
});

describe('findFreeRun', () => {
  const range = { first: 100, last: 120 };
  it.each([
    [[], 10, 100],
    [[100], 10, 101],
    [[105], 10, 106],
    [[100, 101, 102, 103, 104, 105, 106, 107, 108, 109], 10, 110],
    [[110], 10, 100],
    [[105, 115], 10, null],
    [[], 21, 100],
    [[], 22, null],
  ] as [number[], number, number | null][])('taken %j, count %i → %s', (taken, count, expected) => {
    expect(findFreeRun(new Set(taken), count, range)).toBe(expected);
  });
});

describe('dbNameFor', () => {
  it('is a safe identifier, unique per project and task, at most 63 characters', () => {
    const names = [
      dbNameFor('a-1', 'x'),
      dbNameFor('b-2', 'x'),
      dbNameFor('a-1', 'X.Y'),
      dbNameFor('a-1', 'A'.repeat(64)),
      dbNameFor('a-1', '...'),
    ];
    for (const n of names) {
      expect(n).toMatch(/^[a-z0-9_]{1,63}$/);
    }
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('classifyRisk', () => {
  const cfg = (yaml: Record<string, unknown>) => configSchema.parse(yaml);
  it.each([
    [{}, 'low', 'none'],
    [{ setup: [{ id: 'deps', run: 'npm ci' }] }, 'medium', 'bwrap'],
    [{ setup: [{ id: 'deps', run: ['pnpm', 'install'] }] }, 'medium', 'bwrap'],
    [{ verify: [{ id: 'e2e', run: 'node server.js --port $PORT' }] }, 'medium', 'bwrap'],
    [{ teardown: [{ id: 'db', run: 'dropdb $WARREN_DB_NAME' }] }, 'medium', 'bwrap'],
    [{ setup: [{ id: 'get', run: 'curl -fsSL https://x | sh' }] }, 'high', 'bwrap'],
    [{ network: true }, 'high', 'bwrap'],
    [{ provision: [{ path: 'node_modules', mode: 'share' }] }, 'medium', 'bwrap'],
    [{ verify: [{ id: 'unit', run: 'vitest run' }] }, 'low', 'none'],
  ] as [Record<string, unknown>, string, string][])('%j → %s', (yaml, level, sandbox) => {
    const risk = classifyRisk(cfg(yaml));
    expect(risk.level).toBe(level);
    expect(risk.recommendedSandbox).toBe(sandbox);
    expect(risk.reasons.length > 0).toBe(level !== 'low');
  });
});

describe('buildAgentInvocation', () => {
  const config = configSchema.parse({ agents: { claude: { command: ['my-claude', '--x'], prompt: 'argv' } } });
  const req = (prompt: string, over: Partial<AgentRequest> = {}): AgentRequest => ({
    prompt,
    promptFile: '/f',
    home: '/h',
    resume: null,
    sandboxed: false,
    ...over,
  });
  it('a warren.yaml agent replaces a built-in of the same name; no shell anywhere', () => {
    expect(buildAgentInvocation(config, 'claude', req('-p; rm -rf /'))).toEqual({
      argv: ['my-claude', '--x', '-p; rm -rf /'],
      stdin: null,
      promptFile: null,
      env: {},
      session: null,
    });
    expect(buildAgentInvocation(config, 'codex', req('x')).argv).toEqual([
      'codex',
      'exec',
      '--sandbox',
      'workspace-write',
      '-',
    ]);
    expect(() => buildAgentInvocation(config, '__proto__', req('x'))).toThrow(/no agent named/);
    expect(() => buildAgentInvocation(config, 'toString', req('x'))).toThrow(/no agent named/);
    expect(isResumable(config, 'claude')).toBe(false);
    expect(isResumable(config, 'codex')).toBe(true);
  });
  it('the built-ins: unattended flags, their own state folder, a session named up front or resumed', () => {
    const plain = configSchema.parse({});
    const claude = buildAgentInvocation(plain, 'claude', req('hi'));
    expect(claude.argv.slice(0, 6)).toEqual([
      'claude',
      '-p',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash',
    ]);
    expect(claude.argv.slice(6)).toEqual(['--session-id', claude.session, '--settings', CLAUDE_FINAL_SETTINGS]);
    // The Stop hook marks the final result (WARREN_AGENT_DONE), so leftover processes can be told apart.
    expect(JSON.parse(CLAUDE_FINAL_SETTINGS)).toEqual({
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'touch "$WARREN_AGENT_DONE"' }] }] },
    });
    expect(claude).toMatchObject({ stdin: 'hi', env: { CLAUDE_CONFIG_DIR: '/h' } });
    expect(buildAgentInvocation(plain, 'claude', req('hi', { resume: 'S1' })).argv.slice(6, 8)).toEqual([
      '--resume',
      'S1',
    ]);
    expect(buildAgentInvocation(plain, 'codex', req('hi', { resume: 'S2', sandboxed: true }))).toMatchObject({
      argv: ['codex', 'exec', '--dangerously-bypass-approvals-and-sandbox', 'resume', 'S2', '-'],
      stdin: 'hi',
      env: { CODEX_HOME: '/h' },
      session: null,
    });
    const gemini = buildAgentInvocation(plain, 'gemini', req('-x', { resume: 'S3' }));
    expect(gemini).toMatchObject({
      argv: ['gemini', '--skip-trust', '--approval-mode', 'yolo', '--resume', 'S3', '--prompt=-x'],
      env: { GEMINI_CLI_HOME: '/h' },
      session: 'S3',
    });
  });
  it("--mcp: claude and codex get warren's server through their own flags; any other agent is refused", () => {
    const plain = configSchema.parse({});
    const mcp = ['/usr/bin/warren', '--repo', '/r', 'mcp', '--task', 't1'];
    const claude = buildAgentInvocation(plain, 'claude', req('hi', { mcp }));
    expect(claude.argv.slice(4, 9)).toEqual([
      '--allowedTools',
      'Bash',
      'mcp__warren',
      '--mcp-config',
      JSON.stringify({
        mcpServers: { warren: { type: 'stdio', command: '/usr/bin/warren', args: mcp.slice(1) } },
      }),
    ]);
    expect(buildAgentInvocation(plain, 'codex', req('hi', { mcp })).argv).toEqual([
      'codex',
      'exec',
      '--sandbox',
      'workspace-write',
      '-c',
      'mcp_servers.warren.command="/usr/bin/warren"',
      '-c',
      'mcp_servers.warren.args=["--repo","/r","mcp","--task","t1"]',
      '-',
    ]);
    for (const agent of ['gemini', 'aider'])
      expect(() => buildAgentInvocation(plain, agent, req('hi', { mcp }))).toThrow(/--mcp works with claude and codex/);
  });
  it('commandArgv: a string is shell, a list is argv', () => {
    expect(commandArgv('npm ci && echo "$X"')).toEqual(['sh', '-c', 'npm ci && echo "$X"']);
    expect(commandArgv(['echo', '$X'])).toEqual(['echo', '$X']);
  });
});

describe('sandbox', () => {
  const profile = {
    kind: 'bwrap' as const,
    network: false,
    allow: null,
    masked: ['/home/me', '/w'],
    readable: ['/tmp/repo', '/home/me/.gitconfig'],
    writable: ['/w/ws'],
    pinned: ['/w/ws/.git'],
  };
  const none = {
    kind: 'none' as const,
    network: true,
    allow: null,
    masked: [],
    readable: [],
    writable: [],
    pinned: [],
  };
  it('bwrap argv: no capability, a user namespace, read-only root, private /tmp, masks, then what is bound back, then the pins; no network', () => {
    const argv = sandboxArgv(profile, '/w/ws', ['sh', '-c', 'x']);
    expect(argv.slice(0, 5)).toEqual(['bwrap', '--die-with-parent', '--unshare-user', '--cap-drop', 'ALL']);
    expect(argv).not.toContain('--cap-add');
    expect(argv).toContain('--unshare-net');
    const s = argv.join(' ');
    expect(s.indexOf('--ro-bind / /')).toBeLessThan(s.indexOf('--tmpfs /tmp'));
    // The masks come before anything bound back over them (a mask after a bind would hide it again).
    expect(s.indexOf('--tmpfs /tmp')).toBeLessThan(s.indexOf('--tmpfs /home/me'));
    expect(s.indexOf('--tmpfs /w ')).toBeLessThan(s.indexOf('--ro-bind /tmp/repo /tmp/repo'));
    expect(s.indexOf('--ro-bind /home/me/.gitconfig')).toBeLessThan(s.indexOf('--bind /w/ws /w/ws'));
    // A pin comes after the writable workspace bound above, which cannot replace it; the masks turn read-only last.
    expect(s.indexOf('--bind /w/ws /w/ws')).toBeLessThan(s.indexOf('--ro-bind /w/ws/.git /w/ws/.git'));
    expect(s.indexOf('--ro-bind /w/ws/.git')).toBeLessThan(s.indexOf('--remount-ro /home/me'));
    expect(argv.slice(-4)).toEqual(['--', 'sh', '-c', 'x']);
    expect(sandboxArgv({ ...profile, network: true }, '/w/ws', ['x'])).not.toContain('--unshare-net');
    expect(sandboxArgv(none, '/w', ['x'])).toEqual(['x']);
  });
  it('as root, each bound path is bound from its clone under /tmp, in order; a path the agent can change is not followed', () => {
    const staging = new Staging();
    const argv = sandboxArgv(profile, '/w/ws', ['x'], null, staging).join(' ');
    expect(staging.sources).toEqual([
      { path: '/tmp/repo', at: '/tmp/0', follow: true },
      { path: '/home/me/.gitconfig', at: '/tmp/1', follow: true },
      { path: '/w/ws', at: '/tmp/2', follow: false },
      { path: '/w/ws/.git', at: '/tmp/3', follow: false },
    ]);
    expect(argv).toContain(
      '--ro-bind /tmp/0 /tmp/repo --ro-bind /tmp/1 /home/me/.gitconfig --bind /tmp/2 /w/ws --ro-bind /tmp/3 /w/ws/.git',
    );
    // The masks and / stay what they are: only what is bound back comes from a clone.
    expect(argv).toContain('--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /home/me --tmpfs /w');
    expect(staging.locate('/w/ws/node_modules')).toBe('/tmp/2/node_modules');
    expect(staging.locate('/w/ws/.git')).toBe('/tmp/3');
    expect(staging.locate('/elsewhere')).toBeNull();
  });
  it("the sandbox's uid is nobody's here: a user, a group, or a subordinate range that holds it is named", () => {
    const files = {
      '/etc/passwd': `root:x:0:0:root:/root:/bin/sh\n# a comment\nalice:x:1000:1000::/home/alice:/bin/sh\n`,
      '/etc/subuid': `alice:100000:65536\n`,
    };
    expect(uidHolder(SANDBOX_UID, files)).toBeNull();
    expect(uidHolder(1000, files)).toBe('alice in /etc/passwd');
    expect(uidHolder(165535, files)).toBe('alice in /etc/subuid');
    expect(uidHolder(165536, files)).toBeNull();
    expect(uidHolder(SANDBOX_UID, { '/etc/subgid': `bob:${SANDBOX_UID - 10}:65536\n` })).toBe('bob in /etc/subgid');
    expect(uidHolder(SANDBOX_UID, { '/etc/group': `warren:x:${SANDBOX_UID}:\n` })).toBe('warren in /etc/group');
  });
  it('failure reasons come from the log only under a sandbox', () => {
    expect(sandboxFailureReason(profile, "touch: cannot touch '/x': Read-only file system")).toMatch(/write outside/);
    expect(sandboxFailureReason(profile, 'connect ECONNREFUSED 127.0.0.1:5432')).toMatch(/network/);
    expect(sandboxFailureReason({ ...profile, network: true }, 'connect ECONNREFUSED')).toBeNull();
    expect(sandboxFailureReason(none, 'Read-only file system')).toBeNull();
  });
});

describe('containedArgv', () => {
  const root: Containment = { kind: 'pid-namespace', reason: '' };
  const user: Containment = { kind: 'user-namespace', reason: '', uid: 1000, gid: 100 };
  const mount: RunMount = {
    fsType: 'overlay',
    options: 'userxattr,lowerdir=/l,upperdir=/u,workdir=/w',
    target: '/ws/node_modules',
    layers: { lower: '/l', upper: '/u', work: '/w' },
  };
  const initOf = (argv: string[]): number => argv.indexOf('warren-init');

  it('not root: a user and PID namespace, the mounts made as its root, then back to the real uid and gid for the command', () => {
    const argv = containedArgv(user, ['npm', 'test'], false, [mount]);
    const s = argv.join(' ');
    expect(
      s.startsWith(
        'setpriv --pdeathsig KILL -- unshare --user --map-root-user --mount --pid --fork --kill-child --mount-proc -- sh -c ',
      ),
    ).toBe(true);
    const at = argv.indexOf('warren-mount');
    expect(argv.slice(at, at + 6)).toEqual(['warren-mount', 'overlay', mount.options, mount.target, '--', '']);
    expect(argv.slice(at + 6, at + 11)).toEqual(['unshare', '--user', '--map-user=1000', '--map-group=100', '--']);
    // The command as given rides after the mounts, to be looked up where they are seen.
    const looked = containedArgv(user, ['npm', 'test'], false, [mount], './node_modules/.bin/x');
    expect(looked.slice(looked.indexOf('warren-mount') + 4, looked.indexOf('warren-mount') + 6)).toEqual([
      '--',
      './node_modules/.bin/x',
    ]);
    expect(argv.slice(initOf(argv))).toEqual(['warren-init', 'npm', 'test']);
    // Nothing to mount: no mount step, the same namespaces.
    const plain = containedArgv(user, ['true'], false);
    expect(plain).not.toContain('warren-mount');
    expect(plain.join(' ')).toContain('--mount-proc -- unshare --user --map-user=1000 --map-group=100 -- sh -c');
  });

  it('root: the mounts go in the PID namespace wrapper, which has a mount namespace of its own; the command stays root', () => {
    const argv = containedArgv(root, ['x'], false, [mount]);
    expect(argv.slice(0, 10)).toEqual([
      'setpriv',
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--',
    ]);
    expect(argv).toContain('warren-mount');
    expect(argv.join(' ')).not.toContain('--map-user');
  });

  it('bwrap: no wrapper namespace unless there is something to mount, and then only a mount namespace', () => {
    expect(containedArgv(user, ['bwrap', 'x'], true)).toEqual(['setpriv', '--pdeathsig', 'KILL', '--', 'bwrap', 'x']);
    const argv = containedArgv(user, ['bwrap', 'x'], true, [mount]);
    expect(argv.slice(0, 9)).toEqual([
      'setpriv',
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      '--user',
      '--map-root-user',
      '--mount',
      '--',
    ]);
    expect(argv).not.toContain('--pid');
    expect(argv.slice(-7)).toEqual(['unshare', '--user', '--map-user=1000', '--map-group=100', '--', 'bwrap', 'x']);
  });

  it("root in a sandbox: the clones are made in a mount namespace of the run's own, then bwrap runs as the sandbox's uid", () => {
    const staged = [{ path: '/w/ws', at: '/tmp/0', follow: false }];
    const argv = containedArgv(root, ['bwrap', 'x'], true, [], '', staged);
    expect(argv.slice(0, 9)).toEqual([
      'setpriv',
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      '--mount',
      '--',
      'perl',
      '-e',
    ]);
    expect(argv.slice(10, 12)).toEqual([String(SANDBOX_UID), '/tmp']);
    // Then this architecture's numbers of the seven system calls that differ, then each path.
    expect(argv.slice(12, 19).every((n) => /^\d+$/.test(n))).toBe(true);
    expect(argv.slice(19)).toEqual(['n', '/w/ws', '/tmp/0', '--', 'bwrap', 'x']);
    expect(argv).not.toContain('--pid');
    expect(
      containedArgv({ kind: 'process-group', reason: '' }, ['bwrap', 'x'], true, [], '', staged).slice(0, 3),
    ).toEqual(['unshare', '--mount', '--']);
    const log =
      "warren: could not mount the sandbox's paths as uid 1: /w/ws: an idmapped mount: Invalid argument; the command was not run\n";
    expect(mountFailureReason(MOUNT_FAILED_STATUS, log)).toBe(log.slice('warren: '.length).trim());
  });

  it('the process group cannot carry mounts (the caller refuses first); a mount failure reads back from the log', () => {
    expect(containedArgv({ kind: 'process-group', reason: '' }, ['x'], false)).toEqual(['x']);
    expect(() => containedArgv({ kind: 'process-group', reason: '' }, ['x'], false, [mount])).toThrow(/namespace/);
    const log =
      'warren: could not mount overlay on /ws/node_modules for this run: mount: bad; the command was not run\n';
    expect(mountFailureReason(MOUNT_FAILED_STATUS, log)).toBe(
      'could not mount overlay on /ws/node_modules for this run: mount: bad; the command was not run',
    );
    expect(mountFailureReason(1, log)).toBeNull();
    expect(mountFailureReason(MOUNT_FAILED_STATUS, 'the command itself exited 125\n')).toBeNull();
    const missing =
      'warren: command ./x was not found or is not executable, looked up where the copy-on-write layers are mounted; the command was not run\n';
    expect(mountFailureReason(NOT_FOUND_STATUS, missing)).toBe(
      'command ./x was not found or is not executable, looked up where the copy-on-write layers are mounted; the command was not run',
    );
    expect(mountFailureReason(NOT_FOUND_STATUS, 'sh: 1: x: not found\n')).toBeNull();
  });
});

describe('commandCandidates', () => {
  it("where a command would run from, relative ones against the workspace (where it runs), never warren's own folder", () => {
    expect(commandCandidates('./node_modules/.bin/x', '/usr/bin', '/ws')).toEqual(['/ws/node_modules/.bin/x']);
    expect(commandCandidates('bin/x', '/usr/bin', '/ws')).toEqual(['/ws/bin/x']);
    expect(commandCandidates('/opt/x', '/usr/bin', '/ws')).toEqual(['/opt/x']);
    expect(commandCandidates('x', 'node_modules/.bin::/ws/a/.bin:/usr/bin', '/ws')).toEqual([
      '/ws/node_modules/.bin/x',
      '/ws/a/.bin/x',
      '/usr/bin/x',
    ]);
  });
});

describe('checkPolicy', () => {
  const policy: Policy = {
    version: 1,
    expires: '2099-01-01T00:00:00Z',
    rules: [
      { tasks: 'trusted-*', sandbox: ['none', 'bwrap'], network: true },
      { tasks: '*', sandbox: ['bwrap'], network: false },
    ],
  };
  const p = (kind: 'none' | 'bwrap', network: boolean) => ({
    kind,
    network,
    allow: null,
    masked: [],
    readable: [],
    writable: [],
    pinned: [],
  });
  it.each([
    ['trusted-1', p('none', true), null],
    ['trusted-1', p('bwrap', true), null],
    ['other', p('bwrap', false), null],
    ['other', p('none', true), /only with sandbox bwrap/],
    ['other', p('bwrap', true), /no network/],
  ] as [string, ReturnType<typeof p>, RegExp | null][])('%s %j', (id, profile, error) => {
    if (error) expect(() => checkPolicy(policy, id, profile)).toThrow(error);
    else expect(() => checkPolicy(policy, id, profile)).not.toThrow();
  });
  it('a task no rule covers is refused', () => {
    expect(() =>
      checkPolicy({ ...policy, rules: [{ tasks: 'a', sandbox: ['none'], network: false }] }, 'b', p('none', true)),
    ).toThrow(/no rule/);
  });
});

describe('assertRunnable', () => {
  const task = (state: TaskState): Task => ({
    project: 'p',
    id: 't',
    type: 'feat',
    branch: 'feat/t',
    path: '/w/t',
    base: 'main',
    baseCommit: 'a'.repeat(40),
    state,
    createdAt: '',
    updatedAt: '',
    data: {},
  });
  it.each([
    ['setup_failed', /warren setup t/],
    ['removing', /warren rm t/],
    ['remove_failed', /warren rm t/],
    ['creating', /ready/],
  ] as [TaskState, RegExp][])('exec, run and verify refuse a task in %s', (state, hint) => {
    for (const kind of ['exec', 'agent', 'verify'] as const) {
      expect(() => assertRunnable(task(state), kind)).toThrow(/will not run a command/);
      try {
        assertRunnable(task(state), kind);
      } catch (err) {
        expect((err as { hint: string }).hint).toMatch(hint);
      }
    }
  });
  it('setup may run on a setup_failed task; teardown on a removing one', () => {
    expect(() => assertRunnable(task('setup_failed'), 'setup')).not.toThrow();
    expect(() => assertRunnable(task('removing'), 'teardown')).not.toThrow();
    expect(() => assertRunnable(task('ready'), 'exec')).not.toThrow();
  });
});
