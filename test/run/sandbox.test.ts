import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, tmpDir } from '../helpers/repo.js';
import { alive, pidsWithEnv, startCli, waitForFile } from '../helpers/procs.js';

/** The bwrap sandbox against real writes and real connections. .ci/run installs bubblewrap. */

const noBwrap = unavailable(import.meta.filename, 'bwrap');

type Run = { exitCode: number; reason: string | null; sandbox: string; log: string };

describe.skipIf(noBwrap !== null)('sandbox: bwrap', () => {
  it('lets the command write its workspace and /tmp, refuses the main checkout, another workspace, and 127.0.0.1 outside', async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    const a = await repo.warrenJson<{ path: string }>('new', 'feat', 'sa');
    const b = await repo.warrenJson<{ path: string }>('new', 'feat', 'sb');
    expect(a.code).toBe(0);

    const inside = await repo.warrenJson<Run>(
      'exec',
      'sa',
      '--',
      'sh',
      '-c',
      'echo ok > inside.txt && echo t > /tmp/private && cat /tmp/private',
    );
    expect(inside.code).toBe(0);
    expect(inside.json.sandbox).toBe('bwrap');
    expect(fs.readFileSync(path.join(a.json.path, 'inside.txt'), 'utf8')).toBe('ok\n');

    const main = await repo.warrenJson<Run>(
      'exec',
      'sa',
      '--',
      'sh',
      '-c',
      `echo pwned > ${JSON.stringify(path.join(repo.root, 'README.md'))}`,
    );
    expect(main.code).not.toBe(0);
    expect(main.json.reason).toMatch(/sandbox: a write outside the workspace was refused/);
    expect(fs.readFileSync(path.join(repo.root, 'README.md'), 'utf8')).toBe('# main\n');

    const other = await repo.warrenJson<Run>('exec', 'sa', '--', 'touch', path.join(b.json.path, 'from-a'));
    expect(other.code).not.toBe(0);
    expect(fs.existsSync(path.join(b.json.path, 'from-a'))).toBe(false);

    // A server on the host's loopback: the sandbox has a loopback of its own and no route out.
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
    );
    try {
      const connect = `require('node:net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', (e) => { console.error(e.message); process.exit(3); })`;
      const net1 = await repo.warrenJson<Run>('exec', 'sa', '--', process.execPath, '-e', connect);
      expect(net1.code).toBe(3);
      expect(net1.json.reason).toMatch(/sandbox: a network connection was refused/);
      expect(connections).toBe(0);
    } finally {
      server.close();
    }

    // The reasons are recorded with the runs.
    const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
    const reasons = (
      db.prepare("SELECT reason FROM runs WHERE reason LIKE 'sandbox:%'").all() as { reason: string }[]
    ).map((r) => r.reason);
    db.close();
    expect(reasons.length).toBeGreaterThanOrEqual(2);
  });

  it('a per-task --sandbox bwrap overrides sandbox: none; --require-sandbox refuses a risky task without one', async () => {
    const marks = tmpDir('warren-marks-');
    const repo = makeRepo({
      // Setup marks the workspace, and tries to mark a folder outside it (which a sandbox refuses).
      files: {
        'README.md': '# main\n',
        'warren.yaml': `setup:\n  - { id: deps, run: "npm ci --offline || true; touch .setup-ran; touch ${marks}/setup-$WARREN_TASK_ID || true" }\n`,
      },
    });
    const refused = await repo.warrenJson<{ error: { code: string; message: string } }>(
      'new',
      'feat',
      'rq',
      '--require-sandbox',
    );
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toMatch(/medium risk .*package manager/);
    expect(refused.json.error.code).toBe('SANDBOX_REQUIRED');
    expect(fs.readdirSync(marks)).toEqual([]);
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);

    const boxed = await repo.warrenJson<{
      path: string;
      state: string;
      risk: { level: string; recommendedSandbox: string };
    }>('new', 'feat', 'rq', '--require-sandbox', '--sandbox', 'bwrap');
    expect(boxed.code, boxed.stdout + boxed.stderr).toBe(0);
    // Setup during `new` already runs in the task's own sandbox: it marked the workspace, and could not write outside.
    expect(fs.existsSync(path.join(boxed.json.path, '.setup-ran'))).toBe(true);
    expect(fs.existsSync(path.join(marks, 'setup-rq'))).toBe(false);
    expect(boxed.json.risk).toMatchObject({ level: 'medium', recommendedSandbox: 'bwrap' });
    const write = await repo.warrenJson<Run>('exec', 'rq', '--', 'touch', path.join(repo.root, 'escaped'));
    expect(write.code).not.toBe(0);
    expect(fs.existsSync(path.join(repo.root, 'escaped'))).toBe(false);

    const plain = await repo.warrenJson('new', 'feat', 'open');
    expect(plain.code).toBe(0);
    expect(fs.existsSync(path.join(marks, 'setup-open'))).toBe(true);
    const free = await repo.warrenJson<Run>('exec', 'open', '--', 'touch', path.join(marks, 'unsandboxed'));
    expect(free.code).toBe(0);
    expect(free.json.sandbox).toBe('none');

    const bad = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'x1', '--sandbox', 'docker');
    expect(bad.code).toBe(2);
  });

  it('a sandboxed run that times out leaves no process behind either (bwrap PID namespace)', async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\nkill_grace: 300ms\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'st');
    const ready = path.join(made.json.path, 'ready');
    const script =
      'trap "" TERM; setsid sh -c "sleep 300" & sh -c "sleep 300 & wait" & sleep 0.1; touch ready; sleep 300';
    // 3 s: the tree has started (ready) before the timeout, also on a loaded machine.
    const run = startCli(['--json', 'exec', 'st', '--timeout', '3s', '--', 'sh', '-c', script], {
      cwd: repo.root,
      home: repo.home,
    });
    await waitForFile(ready, undefined, run);
    const pids = pidsWithEnv('WARREN_WORKSPACE', made.json.path);
    expect(pids.length).toBeGreaterThanOrEqual(4);
    const result = await run.done;
    expect(result.code).toBe(124);
    // Ended by the timeout and grace, not by the 300 s sleeps (the margin is for a loaded machine: no speed claim).
    expect((JSON.parse(result.stdout) as { durationMs: number }).durationMs).toBeLessThan(30_000);
    expect(pids.filter(alive)).toEqual([]);
  });
});
