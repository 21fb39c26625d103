import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { unavailable } from '../helpers/capabilities.js';
import { HOSTILE } from '../helpers/hostile-text.js';
import { startCli } from '../helpers/procs.js';
import { BIN, makeRepo, runCli, tmpDir, type TestRepo } from '../helpers/repo.js';
import { stopServicesAfter } from '../helpers/services.js';

/**
 * What an agent names, writes and prints reaches the user's terminal only as text: `status`,
 * `diff`, `show`, `list`, refusals, `service logs` (followed too), `transcript` and a run's live
 * output on a terminal show every control character as an escape, while `--json` (and a pipe,
 * for a command's own output) carries the exact text. src/util/terminal-text.ts.
 */

/** Anything a terminal obeys but a newline and a tab: what human output must never hold. */
// eslint-disable-next-line no-control-regex
const OBEYED = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** In a log, colours (ESC [ … m) and carriage returns pass too; nothing else. */
// eslint-disable-next-line no-control-regex
const OBEYED_IN_LOG = /\x1b(?!\[[0-9;]*m)|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/** The hostile names a file can have (no `/`, no NUL). */
const FILE_NAMES = HOSTILE.filter((h) => !h.raw.includes('/') && !h.raw.includes('\0'));
/** The ones a single-line message can hold (no newline, no NUL) and a block shows as on one line (no tab). */
const INLINE = HOSTILE.filter((h) => !/[\n\t\0]/.test(h.raw));

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What shows `\x1b` and `\u009b` as escapes: an escape of an ESC-started sequence, a C1 one, a bidi one. */
const SHOWN = ['\\x1b[1A\\x1b[2K', '\\x1b]52;c;ZXZpbA==\\x07', '\\x9b1A', '\\u202e'];

async function newTask(repo: TestRepo, id: string): Promise<string> {
  const r = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(r.code, r.stderr).toBe(0);
  return r.json.path;
}

function projectKey(home: string): string {
  const store = openStore(home);
  try {
    const [p] = store.listProjects();
    if (!p) throw new Error('no project recorded');
    return p.key;
  } finally {
    store.close();
  }
}

describe('task-controlled text on the terminal', () => {
  it('status, diff --stat, the patch and a refusal show hostile file names escaped; --json has them exactly', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 't');
    fs.writeFileSync(path.join(ws, 'backdoor.js'), 'evil();\r// harmless\n');
    for (const h of FILE_NAMES) fs.writeFileSync(path.join(ws, h.raw), 'x\n');
    const names = ['backdoor.js', ...FILE_NAMES.map((h) => h.raw)].sort();

    const status = await repo.warren('status', 't');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).not.toMatch(OBEYED);
    // The name that erased the line above it hides nothing.
    expect(status.stdout).toContain('?? backdoor.js');
    for (const h of FILE_NAMES) expect(status.stdout).toContain(`?? ${h.line}\n`);
    const statusJson = await repo.warrenJson<{ tracked: { path: string }[] }>('status', 't');
    expect(statusJson.json.tracked.map((t) => t.path).sort()).toEqual(names);

    const stat = await repo.warren('diff', 't', '--stat');
    expect(stat.code, stat.stderr).toBe(0);
    expect(stat.stdout).not.toMatch(OBEYED);
    expect(stat.stdout).toMatch(/^A +\+1 +-0 +backdoor\.js$/m);
    for (const h of FILE_NAMES) expect(stat.stdout).toMatch(new RegExp(`^A +\\+1 +-0 +${escapeRegExp(h.line)}$`, 'm'));
    const statJson = await repo.warrenJson<{ files: { path: string }[] }>('diff', 't', '--stat');
    expect(statJson.json.files.map((f) => f.path).sort()).toEqual(names);

    // The patch: git quotes the names in its headers; a carriage return in a line shows.
    const patch = await repo.warren('diff', 't');
    expect(patch.stdout).not.toMatch(OBEYED);
    expect(patch.stdout).toContain('+evil();\\r// harmless');
    expect((await repo.warrenJson<{ patch: string }>('diff', 't')).json.patch).toContain('+evil();\r// harmless');

    // A refusal that names the files (rm would lose them) names them escaped.
    const rm = await repo.warren('rm', 't');
    expect(rm.code).toBe(1);
    expect(rm.stderr).not.toMatch(OBEYED);
    for (const shown of SHOWN) expect(rm.stderr).toContain(shown);
  });

  it('show and list print a hostile commit message and branch escaped; --json has them exactly', async () => {
    const repo = makeRepo();
    fs.writeFileSync(path.join(await newTask(repo, 't'), 'work.js'), 'x\n');
    // What an agent's checkpoint (through MCP, or its own `warren checkpoint`) may call its commit.
    const subject = `fix ${INLINE.map((h) => h.raw).join(' ')}`;
    const committed = await repo.warren('checkpoint', 't', '-m', subject);
    expect(committed.code, committed.stderr).toBe(0);
    const show = await repo.warren('show', 't');
    expect(show.stdout).not.toMatch(OBEYED);
    expect(show.stdout).toContain(`: fix ${INLINE.map((h) => h.line).join(' ')}\n`);
    const showJson = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 't');
    expect(showJson.json.events.find((e) => e.kind === 'checkpoint')?.message).toContain(subject);

    // A row no CLI could write (branches are TYPE/ID) but a database could hold.
    const branch = 'feat/\x1b]52;c;ZXZpbA==\x07\x1b[1A\x1b[2K\u009b2J\u202eghost';
    const store = openStore(repo.home);
    try {
      store.insertTask({
        project: projectKey(repo.home),
        id: 'ghost',
        type: 'feat',
        branch,
        path: path.join(repo.home, 'nowhere', 'ghost'),
        base: 'main',
        baseCommit: repo.git('rev-parse', 'HEAD'),
        state: 'ready',
        data: {},
      });
    } finally {
      store.close();
    }
    const shownBranch = 'feat/\\x1b]52;c;ZXZpbA==\\x07\\x1b[1A\\x1b[2K\\x9b2J\\u202eghost';
    const list = await repo.warren('list');
    expect(list.stdout).not.toMatch(OBEYED);
    expect(list.stdout).toContain(shownBranch);
    expect((await repo.warrenJson<{ branch: string }[]>('list')).json.map((t) => t.branch)).toContain(branch);
    const ghost = await repo.warren('show', 'ghost');
    expect(ghost.stdout).not.toMatch(OBEYED);
    expect(ghost.stdout).toContain(`branch  ${shownBranch}\n`);
  });

  it('service logs, read and followed, keep colours and show every other escape sequence as text', async () => {
    const repo = makeRepo({
      files: {
        'warren.yaml': `services:\n  web: { run: "printf '\\\\033[32mboot\\\\033[0m \\\\033]52;c;ZXZpbA==\\\\007\\\\033[1A\\\\033[2K\\\\n'; exec sleep 300" }\n`,
      },
    });
    stopServicesAfter(repo.home);
    await newTask(repo, 't');
    const logs = await repo.warrenJson<{ log: string; text: string }>('service', 'logs', 't', 'web');
    expect(logs.json.text).toContain('\x1b[32mboot\x1b[0m \x1b]52;c;ZXZpbA==\x07\x1b[1A\x1b[2K\n');
    const read = await repo.warren('service', 'logs', 't', 'web');
    expect(read.stdout).not.toMatch(OBEYED_IN_LOG);
    expect(read.stdout).toContain('\x1b[32mboot\x1b[0m \\x1b]52;c;ZXZpbA==\\x07\\x1b[1A\\x1b[2K\n');

    const follow = startCli(['service', 'logs', 't', 'web', '--follow'], { cwd: repo.root, home: repo.home });
    let seen = '';
    follow.child.stdout?.on('data', (d: Buffer) => (seen += d.toString()));
    await expect.poll(() => seen).toContain('boot');
    // The service writes an OSC in two pieces, the second after the first was printed.
    fs.appendFileSync(logs.json.log, 'tail \x1b]5');
    await expect.poll(() => seen).toContain('tail ');
    fs.appendFileSync(logs.json.log, '2;c;ZXZpbA==\x07 \x1b[1;31mred\n');
    await expect.poll(() => seen).toContain('red');
    follow.child.kill('SIGINT');
    const done = await follow.done;
    expect(done.code).toBe(0);
    expect(done.stdout).not.toMatch(OBEYED_IN_LOG);
    expect(done.stdout).toContain('tail \\x1b]52;c;ZXZpbA==\\x07 \x1b[1;31mred\n');
    // The colour the log left on is ended before the terminal is handed back.
    expect(done.stdout.endsWith('\x1b[0m')).toBe(true);
    expect((await repo.warren('service', 'stop', 't', 'web')).code).toBe(0);
  });

  const noPty = unavailable(import.meta.filename, 'pty');
  it("transcript and a run: escaped for people; a pipe gets the agent's bytes, a terminal its output escaped", async () => {
    const repo = makeRepo();
    await newTask(repo, 't');
    // A stand-in claude: its transcript and its output are the agent's to write.
    const bin = tmpDir('warren-term-bin-');
    const said = INLINE.map((h) => h.raw).join(' ');
    const lines = [
      { type: 'user', uuid: 'u1', message: { role: 'user', content: 'go' } },
      {
        type: 'assistant',
        uuid: 'a1',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: `done ${said}` },
            { type: 'tool_use', id: 'c1', name: 'Bash\x1b[2K', input: { command: 'ls\x1b]52;c;eA==\x07' } },
          ],
        },
      },
      {
        type: 'user',
        uuid: 'u2',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: `out\u009b2J` }] },
      },
    ];
    fs.writeFileSync(
      path.join(bin, 'claude'),
      `#!${process.execPath}
const fs = require('fs'), path = require('path');
const session = process.argv[process.argv.indexOf('--session-id') + 1];
const dir = path.join(process.env.CLAUDE_CONFIG_DIR, 'projects', 'p');
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, session + '.jsonl'), ${JSON.stringify(lines.map((l) => JSON.stringify(l)).join('\n') + '\n')});
process.stdout.write('working \\x1b]52;c;ZXZpbA==\\x07\\x1b[1A\\x1b[2K done\\n');
`,
      { mode: 0o755 },
    );
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: tmpDir('warren-term-home-'), CLAUDE_CONFIG_DIR: '' };
    const ran = await runCli(['run', 't', '--agent', 'claude', '--prompt', 'go'], {
      cwd: repo.root,
      home: repo.home,
      env,
    });
    expect(ran.code, ran.stderr).toBe(0);
    // Not a terminal: the agent's output as it wrote it (its log has it too).
    expect(ran.stdout).toBe('working \x1b]52;c;ZXZpbA==\x07\x1b[1A\x1b[2K done\n');

    const transcript = await repo.warren('transcript', 't');
    expect(transcript.code, transcript.stderr).toBe(0);
    expect(transcript.stdout).not.toMatch(OBEYED);
    expect(transcript.stdout).toContain(`done ${INLINE.map((h) => h.line).join(' ')}`);
    expect(transcript.stdout).toContain('▸ Bash\\x1b[2K  ls\\x1b]52;c;eA==\\x07');
    expect(transcript.stdout).toContain('    out\\x9b2J');
    const json = await repo.warrenJson<{ items: { kind: string; text?: string }[] }>('transcript', 't');
    expect(json.json.items.find((i) => i.kind === 'text')?.text).toBe(`done ${said}`);

    if (noPty !== null) return;
    // On a terminal (util-linux's script gives the run a pseudo-terminal): colours pass, the rest shows.
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const tty = spawnSync(
      'script',
      [
        '-qec',
        [process.execPath, BIN, 'run', 't', '--agent', 'claude', '--prompt', 'go'].map(quote).join(' '),
        '/dev/null',
      ],
      { cwd: repo.root, env: { ...process.env, ...env, WARREN_HOME: repo.home }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(tty.status, tty.stdout).toBe(0);
    expect(tty.stdout).not.toMatch(OBEYED_IN_LOG);
    expect(tty.stdout).toContain('working \\x1b]52;c;ZXZpbA==\\x07\\x1b[1A\\x1b[2K done');
  });
});
