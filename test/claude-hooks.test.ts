import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { installedCommand } from '../src/cli/installed.js';
import { MAX_PAYLOAD_BYTES, readJsonPayload } from '../src/cli/payload.js';
import { isWarrenError } from '../src/errors.js';
import { parseCreatePayload, parseRemovePayload, shellCommand, taskIdForName } from '../src/run/claude-hooks.js';
import { AGENT_CLI_BIN, unavailable } from './helpers/capabilities.js';
import { NOTE, startModelServer } from './helpers/model-server.js';
import { BIN, makeRepo, runCli, runWarren, tmpDir, type TestRepo } from './helpers/repo.js';

/**
 * Claude Code's WorktreeCreate/WorktreeRemove hooks answered by warren. The payloads below are
 * the shapes Claude Code versions have sent (2.1.x sends `name`; earlier builds and other
 * managers' records show `worktree_name` + `base_commit`, `worktree_path` + `base_ref`, and
 * `branch_name`), with the fields every hook input carries.
 */

const common = (cwd: string) => ({
  session_id: '0b3c9a54-5a1e-4f44-9a0e-7c1d2b3a4f5e',
  transcript_path: '/home/u/.claude/projects/x/0b3c9a54.jsonl',
  cwd,
  permission_mode: 'default',
});

const CREATE_SHAPES = (cwd: string): [string, Record<string, unknown>, { id: string; base: string | null }][] => [
  [
    'name (2.1.x)',
    { ...common(cwd), hook_event_name: 'WorktreeCreate', name: 'bright-running-fox' },
    { id: 'bright-running-fox', base: null },
  ],
  [
    'worktree_name + base_commit',
    { ...common(cwd), hook_event_name: 'WorktreeCreate', worktree_name: 'agent-a1b2c3d4', base_commit: 'main' },
    { id: 'agent-a1b2c3d4', base: 'main' },
  ],
  [
    'worktree_path + base_ref',
    {
      ...common(cwd),
      hook_event_name: 'WorktreeCreate',
      worktree_path: `${cwd}/.claude/worktrees/fix-login`,
      base_ref: 'main',
    },
    { id: 'fix-login', base: 'main' },
  ],
  [
    'branch_name',
    { hook_event_name: 'WorktreeCreate', branch_name: 'feature/auth refactor', cwd },
    { id: 'feature-auth-refactor', base: null },
  ],
];

describe('Claude Code hook payloads (pure)', () => {
  it.each(CREATE_SHAPES('/r'))('WorktreeCreate, %s', (_shape, payload, want) => {
    expect(parseCreatePayload(JSON.stringify(payload))).toMatchObject({
      ...want,
      cwd: typeof payload.cwd === 'string' ? payload.cwd : null,
    });
  });
  it('WorktreeRemove and bad payloads', () => {
    expect(
      parseRemovePayload(JSON.stringify({ ...common('/r'), hook_event_name: 'WorktreeRemove', worktree_path: '/w/x' })),
    ).toEqual({ worktreePath: '/w/x', cwd: '/r' });
    expect(() => parseCreatePayload('')).toThrow(/got nothing/);
    expect(() => parseCreatePayload('[1]')).toThrow(/JSON payload/);
    expect(() => parseCreatePayload('{"cwd":"/r"}')).toThrow(/names no worktree/);
    expect(() => parseCreatePayload('{"name":"---"}')).toThrow(/no usable task ID/);
    expect(() => parseRemovePayload('{"name":"x"}')).toThrow(/worktree_path/);
  });
  it.each([
    ['fix-login', 'fix-login'],
    ['feature/auth', 'feature-auth'],
    ['-rf /', 'rf'],
    ['../../etc', 'etc'],
    ['a..b.lock', 'a.b'],
    ['x'.repeat(80), 'x'.repeat(64)],
    ['日本', null],
  ])('task ID for %j is %j', (name, id) => {
    expect(taskIdForName(name)).toBe(id);
  });
  it('the hook command is quoted for the shell Claude Code runs it with', () => {
    expect(shellCommand(['/usr/bin/node', '/opt/my warren/bin/warren.js', 'hook', "it's"])).toBe(
      `/usr/bin/node '/opt/my warren/bin/warren.js' hook 'it'\\''s'`,
    );
  });
});

function hook(repo: TestRepo, which: 'claude-create' | 'claude-remove', payload: unknown, cwd = repo.root) {
  return runWarren(['hook', which], { cwd, home: repo.home, input: JSON.stringify(payload) });
}

describe('the hook payload on stdin', () => {
  it('is read once, to where its object closes, while stdin stays open: brackets and quotes inside strings do not end it, and nothing parses it meanwhile', async () => {
    const text = '{"name":"a}\\"{b","list":[1,{"y":"]"}],"é":"ü"}';
    const stdin = new PassThrough();
    const parse = vi.spyOn(JSON, 'parse');
    const reading = readJsonPayload(stdin, { what: 'the WorktreeCreate hook' });
    // One byte a chunk, and stdin is never ended.
    for (const byte of Buffer.from(`  ${text}\n`)) stdin.write(Buffer.from([byte]));
    expect(await reading).toBe(`  ${text}`);
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
    expect(JSON.parse(text)).toMatchObject({ name: 'a}"{b', é: 'ü' });
    expect(stdin.listenerCount('data')).toBe(0);
  });

  it('takes a payload up to the cap, and refuses one past it (USAGE), reading no further', async () => {
    const fits = JSON.stringify({ name: 'x', pad: 'p'.repeat(MAX_PAYLOAD_BYTES - 40) });
    expect(await readJsonPayload(PassThrough.from([fits]), { what: 'the WorktreeCreate hook' })).toBe(fits);

    const stdin = new PassThrough();
    const reading = readJsonPayload(stdin, { what: 'the WorktreeCreate hook' });
    const chunk = Buffer.alloc(64 * 1024, 'p');
    stdin.write('{"name":"x","pad":"');
    let written = 0;
    let err: unknown = null;
    reading.catch((e: unknown) => (err = e));
    while (err === null && written < 4 * MAX_PAYLOAD_BYTES) {
      stdin.write(chunk);
      written += chunk.length;
      await new Promise((r) => setImmediate(r));
    }
    expect(isWarrenError(err, 'USAGE')).toBe(true);
    expect((err as Error).message).toBe(
      'the WorktreeCreate hook got more than 1 MiB on stdin, far more than any hook payload (a few hundred bytes); it read no further, and nothing was done.',
    );
    expect(written).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES + chunk.length);
    expect(stdin.listenerCount('data')).toBe(0);
  });

  it('warren hook claude-create refuses a payload over 1 MiB and makes nothing', async () => {
    const repo = makeRepo();
    const big = JSON.stringify({
      hook_event_name: 'WorktreeCreate',
      name: 'big',
      cwd: repo.root,
      pad: 'x'.repeat(2 * MAX_PAYLOAD_BYTES),
    });
    const r = await runWarren(['hook', 'claude-create'], { cwd: repo.root, home: repo.home, input: big });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('the WorktreeCreate hook got more than 1 MiB on stdin');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    // A payload of the usual size still works.
    const ok = await runWarren(['hook', 'claude-create'], {
      cwd: repo.root,
      home: repo.home,
      input: JSON.stringify({ hook_event_name: 'WorktreeCreate', name: 'small', cwd: repo.root }),
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toMatch(/\/small$/);
  });
});

describe('warren hooks install claude', () => {
  it('merges both hooks into .claude/settings.local.json, keeps what was there, is idempotent, and refuses a second WorktreeCreate or a broken file', async () => {
    const repo = makeRepo();
    const file = path.join(repo.root, '.claude', 'settings.local.json');
    const mine = {
      permissions: { allow: ['Bash(npm test)'] },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] }] },
    };
    repo.write('.claude/settings.local.json', JSON.stringify(mine));
    const first = await repo.warrenJson<{ added: string[]; file: string }>('hooks', 'install', 'claude');
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.added).toEqual(['WorktreeCreate', 'WorktreeRemove']);
    const written = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      permissions: unknown;
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    expect(written.permissions).toEqual(mine.permissions);
    expect(written.hooks.PreToolUse).toEqual(mine.hooks.PreToolUse);
    expect(written.hooks.WorktreeCreate?.[0]?.hooks[0]?.command).toMatch(/warren\.js hook claude-create$/);
    expect(written.hooks.WorktreeRemove?.[0]?.hooks[0]?.command).toMatch(/warren\.js hook claude-remove$/);
    // The settings file is the checkout's own: kept out of git status through info/exclude.
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(repo.root, '.git', 'info', 'exclude'), 'utf8')).toContain(
      '\n/.claude/settings.local.json\n',
    );
    const human = await repo.warren('hooks', 'install', 'claude');
    expect(human.stdout).toContain("already has warren's hooks; nothing was changed");
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(written);

    const other = makeRepo();
    const theirs = JSON.stringify({
      hooks: { WorktreeCreate: [{ hooks: [{ type: 'command', command: 'wt claude hook-worktree-create' }] }] },
    });
    other.write('.claude/settings.local.json', theirs);
    const refused = await other.warrenJson<{ error: { code: string; message: string } }>('hooks', 'install', 'claude');
    expect(refused.code).toBe(2);
    expect(refused.json.error.message).toMatch(/already has a WorktreeCreate hook \(wt claude hook-worktree-create\)/);
    expect(fs.readFileSync(path.join(other.root, '.claude', 'settings.local.json'), 'utf8')).toBe(theirs);
    other.write('.claude/settings.local.json', '{ not json');
    expect((await other.warrenJson('hooks', 'install', 'claude')).code).toBe(2);
    expect((await other.warrenJson('hooks', 'install', 'codex')).code).toBe(2);
  });
});

describe('the hook names the installed warren', () => {
  it('the `warren` on PATH that is this warren, by absolute path; else node and the script', async () => {
    const repo = makeRepo();
    const bin = tmpDir('warren-bin-');
    fs.symlinkSync(BIN, path.join(bin, 'warren'));
    const other = tmpDir('warren-other-bin-');
    fs.writeFileSync(path.join(other, 'warren'), '#!/bin/sh\n', { mode: 0o755 });
    const r = await runCli(['--json', 'hooks', 'install', 'claude'], {
      cwd: repo.root,
      home: repo.home,
      env: { PATH: `${other}:${bin}:${process.env.PATH ?? ''}` },
    });
    expect(r.code, r.stderr).toBe(0);
    const hooks = (JSON.parse(r.stdout) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks;
    expect(hooks.WorktreeCreate?.[0]?.hooks[0]?.command).toBe(`${bin}/warren hook claude-create`);
    expect(hooks.WorktreeRemove?.[0]?.hooks[0]?.command).toBe(`${bin}/warren hook claude-remove`);
    expect(installedCommand([process.execPath, BIN], `${other}:relative`)).toEqual([process.execPath, BIN]);
  });
});

describe('warren hook claude-create / claude-remove', () => {
  it('every payload shape makes a workspace and prints only its path; the same name again reuses it', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# main\n',
        'warren.yaml': 'setup:\n  - { id: hello, run: "echo setting up $WARREN_TASK_ID" }\n',
      },
    });
    repo.git('branch', 'release');
    for (const [shape, payload, want] of CREATE_SHAPES(repo.root)) {
      // Claude Code runs the hook from the session's folder; a subagent's may be elsewhere, the payload's cwd says which project.
      const r = await hook(repo, 'claude-create', payload, tmpDir());
      expect(r.code, `${shape}: ${r.stderr}`).toBe(0);
      const listed = (await repo.warrenJson<{ id: string; path: string; branch: string }[]>('list')).json.find(
        (t) => t.id === want.id,
      );
      expect(r.stdout, shape).toBe(`${listed?.path}\n`);
      expect(r.stderr).toContain(`setting up ${want.id}`);
      expect(fs.existsSync(path.join(listed?.path ?? '', 'README.md'))).toBe(true);
    }
    const again = await hook(repo, 'claude-create', CREATE_SHAPES(repo.root)[0]?.[1]);
    expect(again.code).toBe(0);
    expect((await repo.warrenJson<unknown[]>('list')).json).toHaveLength(4);
    const based = await hook(repo, 'claude-create', { name: 'from-release', base_ref: 'release', cwd: repo.root });
    expect(based.code, based.stderr).toBe(0);
    expect((await repo.warrenJson<{ base: string }>('show', 'from-release')).json.base).toBe('release');
  });

  it('remove refuses to lose work, saying so on stderr as Claude Code shows it; removes a clean one; refuses a path warren did not make', async () => {
    const repo = makeRepo();
    const made = await hook(repo, 'claude-create', { name: 'wip', cwd: repo.root });
    const ws = made.stdout.trim();
    fs.writeFileSync(path.join(ws, 'draft.txt'), 'unsaved\n');
    const payload = { ...common(repo.root), hook_event_name: 'WorktreeRemove', worktree_path: ws };
    const refused = await hook(repo, 'claude-remove', payload);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^warren: task wip has 1 uncommitted change\(s\) that removing would lose: \?\? draft\.txt\. Nothing was removed\.\n {2}hint: /,
    );
    expect(fs.readFileSync(path.join(ws, 'draft.txt'), 'utf8')).toBe('unsaved\n');

    fs.rmSync(path.join(ws, 'draft.txt'));
    const removed = await hook(repo, 'claude-remove', payload);
    expect(removed.code, removed.stderr).toBe(0);
    expect(fs.existsSync(ws)).toBe(false);
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);

    const stranger = await hook(repo, 'claude-remove', {
      hook_event_name: 'WorktreeRemove',
      worktree_path: tmpDir(),
      cwd: repo.root,
    });
    // A path that names no task is bad input (exit 2), as an unknown task is to every command.
    expect(stranger.code).toBe(2);
    expect(stranger.stderr).toMatch(/is not a warren workspace/);
    expect((await runCli(['hook', 'claude-create'], { cwd: repo.root, home: repo.home, input: 'not json' })).code).toBe(
      2,
    );
  });
});

const noClaude = unavailable(import.meta.filename, 'claude-cli');

describe.skipIf(noClaude !== null)("the real claude --worktree with warren's hooks", () => {
  it(
    'claude --worktree NAME works in a warren workspace against the scripted model server',
    { timeout: 180_000 },
    async () => {
      const server = await startModelServer();
      const repo = makeRepo({ files: { 'README.md': '# main\n' } });
      expect((await repo.warren('hooks', 'install', 'claude')).code).toBe(0);
      const env = {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: tmpDir('warren-claude-user-'),
        CLAUDE_CONFIG_DIR: '',
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'scripted',
      };
      // Not spawnSync: the scripted server answers from this process's event loop.
      const child = spawn(
        path.join(AGENT_CLI_BIN, 'claude'),
        ['--worktree', 'fix-login', '-p', '--permission-mode', 'acceptEdits', '--allowedTools', 'Bash'],
        {
          cwd: repo.root,
          env: { ...process.env, ...env, WARREN_HOME: repo.home },
          timeout: 150_000,
        },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.stdin.end('Write the note, then record where you are.');
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const r = { status, stdout: out, stderr: '' };
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      const task = (await repo.warrenJson<{ id: string; path: string; state: string }[]>('list')).json;
      expect(task).toMatchObject([{ id: 'fix-login', state: 'ready' }]);
      const ws = task[0]?.path ?? '';
      expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
      expect(fs.readFileSync(path.join(ws, 'ran-in.txt'), 'utf8')).toBe(`${ws}\n`);
      expect(fs.existsSync(path.join(repo.root, 'agent-note.txt'))).toBe(false);
    },
  );
});
