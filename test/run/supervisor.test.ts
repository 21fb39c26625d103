import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { openStore } from '../../src/composition.js';
import { lastRun } from '../../src/web/run-events.js';
import { BIN, makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';
import { alive, pidsWithEnv, startCli, waitForFile, waitUntilGone } from '../helpers/procs.js';

/**
 * The supervisor against real process trees: every process of a run is found by the
 * WARREN_WORKSPACE it inherits, and proven gone by pid afterwards.
 */

const GRACE_MS = 500;

async function taskRepo(id: string): Promise<{ repo: TestRepo; ws: string; marks: string }> {
  const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': `kill_grace: ${GRACE_MS}ms\n` } });
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(made.code).toBe(0);
  return { repo, ws: made.json.path, marks: tmpDir('warren-marks-') };
}

// Each tree touches $READY once all of its processes have started.
const TREES: { name: string; script: string; minProcs: number }[] = [
  { name: 'plain child', script: 'touch "$READY"; exec sleep 300', minProcs: 1 },
  {
    name: 'grandchildren',
    script: 'sh -c "sleep 300 & sleep 300 & wait" & sh -c "sleep 301 & wait" & sleep 0.1; touch "$READY"; wait',
    minProcs: 5,
  },
  {
    name: 'setsid escapee and double fork',
    script: 'setsid sh -c "sleep 300" & (sh -c "sleep 302 &" &) ; sleep 0.1; touch "$READY"; sleep 300',
    minProcs: 3,
  },
  {
    name: 'a child ignoring SIGTERM',
    script: 'trap "" TERM; sh -c "trap \\"\\" TERM; sleep 300" & sleep 0.1; touch "$READY"; sleep 300',
    minProcs: 3,
  },
];

describe('warren exec --timeout ends the whole tree', () => {
  // 2 s: every process of the tree has started (READY) before the timeout, also on a loaded machine.
  it.each(TREES)('$name: exit 124 within timeout + grace + 1.5s, zero survivors', async ({ script, minProcs }) => {
    const { repo, ws, marks } = await taskRepo('t1');
    const ready = path.join(marks, 'ready');
    const started = Date.now();
    const run = startCli(['--json', 'exec', 't1', '--timeout', '2s', '--', 'sh', '-c', script], {
      cwd: repo.root,
      home: repo.home,
      env: { READY: ready },
    });
    await waitForFile(ready, undefined, run);
    const pids = pidsWithEnv('WARREN_WORKSPACE', ws);
    expect(pids.length).toBeGreaterThanOrEqual(minProcs);
    const result = await run.done;
    const wall = Date.now() - started;
    expect(result.code).toBe(124);
    const json = JSON.parse(result.stdout) as { exitCode: number; timedOut: boolean; durationMs: number; log: string };
    expect(json.timedOut).toBe(true);
    // Node's timers fire late on a loaded machine: the slack is for that; a tree left running would take 300 s.
    expect(json.durationMs).toBeLessThanOrEqual(2000 + GRACE_MS + 1500);
    // The bound is the supervised run's (durationMs, measured by warren around the spawn). The
    // wall clock adds Node's start-up, which on a loaded CI machine is seconds; it only guards
    // against a hang here.
    expect(wall).toBeLessThan(2000 + GRACE_MS + 10_000);
    expect(pids.filter(alive)).toEqual([]);
    expect(pidsWithEnv('WARREN_WORKSPACE', ws)).toEqual([]);
  });
});

describe('warren stopped by a signal', () => {
  it('Ctrl-C (SIGINT to warren) reaches the command, which ends; exit 130, zero survivors', async () => {
    const { repo, ws, marks } = await taskRepo('c1');
    const ready = path.join(marks, 'ready');
    const got = path.join(marks, 'got');
    const script =
      'trap "echo TERM > \\"$GOT\\"; exit 0" TERM; trap "echo INT > \\"$GOT\\"; exit 0" INT; setsid sleep 300 & touch "$READY"; while :; do sleep 0.05; done';
    const run = startCli(['--json', 'exec', 'c1', '--', 'sh', '-c', script], {
      cwd: repo.root,
      home: repo.home,
      env: { READY: ready, GOT: got },
    });
    await waitForFile(ready, undefined, run);
    const pids = pidsWithEnv('WARREN_WORKSPACE', ws);
    expect(pids.length).toBeGreaterThanOrEqual(2);
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    const json = JSON.parse(result.stdout) as { canceledBy: string; timedOut: boolean };
    expect(json).toMatchObject({ canceledBy: 'SIGINT', timedOut: false });
    expect(fs.readFileSync(got, 'utf8').trim()).toMatch(/^(TERM|INT)$/);
    expect(pids.filter(alive)).toEqual([]);
  });

  // POSIX sh starts a background job with SIGINT and SIGQUIT ignored, and the namespace's init
  // runs the command as one: without putting them back, a Python command could not be stopped
  // with SIGINT at all, whether it came from the init (forwarding) or straight to the command.
  it.each(['the command itself', "the namespace's init"])(
    'a command starts with every signal at its default: SIGINT sent to %s raises KeyboardInterrupt in a Python command',
    async (target) => {
      const { repo, ws, marks } = await taskRepo(target === 'the command itself' ? 'py1' : 'py2');
      const [ready, got, ign] = ['ready', 'got', 'ign'].map((f) => path.join(marks, f)) as [string, string, string];
      const script = [
        'import os, sys, time',
        "line = [l for l in open('/proc/self/status') if l.startswith('SigIgn')][0]",
        "open(os.environ['IGN'], 'w').write(line.split()[1])",
        // READY is made inside the try: the test may send SIGINT the moment the file exists.
        'try:',
        "    open(os.environ['READY'], 'w').close()",
        '    time.sleep(60)',
        'except KeyboardInterrupt:',
        "    open(os.environ['GOT'], 'w').write('KeyboardInterrupt')",
      ].join('\n');
      const run = startCli(
        ['--json', 'exec', target === 'the command itself' ? 'py1' : 'py2', '--', 'python3', '-c', script],
        {
          cwd: repo.root,
          home: repo.home,
          env: { READY: ready, GOT: got, IGN: ign },
        },
      );
      await waitForFile(ready, undefined, run);
      // Neither SIGINT (mask 0x2) nor SIGQUIT (0x4) is ignored. (Python itself ignores SIGPIPE and SIGXFSZ.)
      expect(BigInt(`0x${fs.readFileSync(ign, 'utf8')}`) & 0x6n).toBe(0n);
      const pids = pidsWithEnv('WARREN_WORKSPACE', ws);
      const argv = (pid: number): string[] => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const pick =
        target === 'the command itself'
          ? (p: number) => /python3$/.test(argv(p)[0] ?? '')
          : (p: number) => argv(p)[0] === 'sh' && argv(p).includes('warren-init');
      const pid = pids.find(pick);
      expect(pid, pids.map((p) => argv(p).join(' ')).join(' | ')).toBeDefined();
      process.kill(pid as number, 'SIGINT');
      const result = await run.done;
      expect(result.code, result.stderr).toBe(0);
      expect(fs.readFileSync(got, 'utf8')).toBe('KeyboardInterrupt');
      expect(pidsWithEnv('WARREN_WORKSPACE', ws)).toEqual([]);
    },
  );

  it('warren killed with SIGKILL: the kernel ends every process of the run', async () => {
    const { repo, ws, marks } = await taskRepo('k1');
    const ready = path.join(marks, 'ready');
    const script =
      'trap "" TERM INT; setsid sh -c "sleep 300" & sh -c "sleep 300 & wait" & sleep 0.1; touch "$READY"; sleep 300';
    const run = startCli(['exec', 'k1', '--', 'sh', '-c', script], {
      cwd: repo.root,
      home: repo.home,
      env: { READY: ready },
    });
    await waitForFile(ready, undefined, run);
    const pids = pidsWithEnv('WARREN_WORKSPACE', ws);
    expect(pids.length).toBeGreaterThanOrEqual(4);
    run.child.kill('SIGKILL');
    await run.done;
    expect(await waitUntilGone(pids)).toEqual([]);
    expect(pidsWithEnv('WARREN_WORKSPACE', ws)).toEqual([]);

    // The killed warren could not record the end; the next run of the task closes the record.
    const openRuns = (): Record<string, unknown>[] => {
      const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
      try {
        return db
          .prepare('SELECT id, ended_at, reason FROM runs WHERE task_id = ? ORDER BY started_at')
          .all('k1') as Record<string, unknown>[];
      } finally {
        db.close();
      }
    };
    const [killed] = openRuns();
    expect(killed).toMatchObject({ ended_at: null });
    expect((await repo.warren('exec', 'k1', '--', 'true')).code).toBe(0);
    const [closed, next] = openRuns();
    expect(closed).toMatchObject({ id: killed?.id, reason: expect.stringMatching(/^interrupted: /) });
    expect(closed?.ended_at).toEqual(expect.any(String));
    expect(next?.reason).toBeNull();
    const shown = await repo.warrenJson<{ events: { kind: string; message: string }[] }>(
      'show',
      'k1',
      '--events',
      '50',
    );
    expect(shown.json.events.some((e) => e.kind === 'run.interrupted' && e.message.includes(String(killed?.id)))).toBe(
      true,
    );
  });
});

describe('the recorded run', () => {
  it('keeps argv, times, exit code, signal, timedOut and the log in SQLite; output also streamed', async () => {
    const { repo, ws } = await taskRepo('r1');
    const ok = await repo.warrenJson<{ exitCode: number; log: string }>(
      'exec',
      'r1',
      '--',
      'sh',
      '-c',
      'echo out-line; echo err-line >&2; pwd; exit 7',
    );
    expect(ok.code).toBe(7);
    expect(ok.json.exitCode).toBe(7);
    // --json: the command's output goes to stderr so stdout stays one JSON document.
    expect(ok.stderr).toContain('out-line');
    const log = fs.readFileSync(ok.json.log, 'utf8');
    expect(log).toContain('out-line');
    expect(log).toContain('err-line');
    expect(log).toContain(ws);
    expect(ok.json.log.startsWith(repo.home)).toBe(true);

    const human = await repo.warren('exec', 'r1', '--', 'sh', '-c', 'echo to-stdout');
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('to-stdout\n');

    const late = await repo.warrenJson('exec', 'r1', '--timeout', '300ms', '--', 'sleep', '30');
    expect(late.code).toBe(124);

    const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
    const rows = db.prepare('SELECT * FROM runs ORDER BY started_at').all() as Record<string, unknown>[];
    db.close();
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      task_id: 'r1',
      kind: 'exec',
      exit_code: 7,
      signal: null,
      timed_out: 0,
      cwd: ws,
      log_path: ok.json.log,
    });
    expect(JSON.parse(String(rows[0]?.argv))).toEqual(['sh', '-c', 'echo out-line; echo err-line >&2; pwd; exit 7']);
    expect(Date.parse(String(rows[0]?.ended_at))).toBeGreaterThanOrEqual(Date.parse(String(rows[0]?.started_at)));
    expect(rows[2]).toMatchObject({ timed_out: 1, signal: 'SIGTERM', exit_code: 143 });
    expect(String(rows[2]?.reason)).toContain('timed out');
  });

  it("show --json keeps each event's own kind: a run's payload (its kind exec or agent) does not hide run.started and run.ended", async () => {
    const { repo } = await taskRepo('s1');
    expect((await repo.warren('exec', 's1', '--', 'true')).code).toBe(0);
    const shown = await repo.warrenJson<{ events: { kind: string }[] }>('show', 's1', '--events', '50');
    const kinds = shown.json.events.map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['run.started', 'run.ended']));
    expect(kinds).not.toContain('exec');
  });

  it('refuses a missing command, a bad duration and an unknown task before running anything', async () => {
    const { repo } = await taskRepo('m1');
    const cases: [string[], number, string][] = [
      [['exec', 'm1', '--', 'no-such-command-xyz'], 1, 'COMMAND_FAILED'],
      [['exec', 'm1', '--timeout', '5', '--', 'true'], 2, 'DURATION_INVALID'],
      [['exec', 'nope', '--', 'true'], 2, 'TASK_NOT_FOUND'],
      [['exec', '-bad', '--', 'true'], 2, 'USAGE'],
    ];
    for (const [args, code, errorCode] of cases) {
      const r = await repo.warrenJson<{ error: { code: string } }>(...args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.json.error.code).not.toBe('INTERNAL');
      if (errorCode !== 'USAGE') expect(r.json.error.code).toBe(errorCode);
    }
    const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
    expect((db.prepare('SELECT COUNT(*) AS n FROM runs').get() as { n: number }).n).toBe(0);
    db.close();
  });

  it('a run holds the task lock: a second exec or rm meanwhile is refused and runs nothing', async () => {
    const { repo, marks } = await taskRepo('l1');
    const ready = path.join(marks, 'ready');
    const first = startCli(['exec', 'l1', '--timeout', '30s', '--', 'sh', '-c', 'touch "$READY"; sleep 30'], {
      cwd: repo.root,
      home: repo.home,
      env: { READY: ready },
    });
    try {
      await waitForFile(ready, undefined, first);
      const marker = path.join(marks, 'second');
      const second = await repo.warrenJson<{ error: { code: string } }>('exec', 'l1', '--', 'touch', marker);
      expect(second.code).toBe(1);
      expect(second.json.error.code).toBe('LOCK_HELD');
      expect(fs.existsSync(marker)).toBe(false);
      const rm = await repo.warrenJson<{ error: { code: string } }>('rm', 'l1');
      expect(rm.json.error.code).toBe('LOCK_HELD');
    } finally {
      first.child.kill('SIGTERM');
      expect((await first.done).code).toBe(143);
    }
  });
});

/** `bash -c SCRIPT` with warren as "$W": its stdout and stderr, once the whole pipeline is done. */
function pipeline(repo: TestRepo, script: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: repo.root,
      env: { ...process.env, WARREN_HOME: repo.home, W: `${process.execPath} ${BIN}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', () => resolve({ stdout, stderr }));
  });
}

/** What an unhandled error looks like on stderr: a stack frame or Node's own banner. */
const CRASH = /^\s+at |Unhandled 'error' event|internal error/m;

describe('a closed output pipe', () => {
  it('`warren exec ID -- seq 1 200000 | head -1`: the run ends cleanly, exit 141, its reason recorded, nothing left running', async () => {
    const { repo, ws } = await taskRepo('p1');
    const r = await pipeline(repo, '$W exec p1 -- seq 1 200000 | head -1; echo "warren exited ${PIPESTATUS[0]}"');
    expect(r.stdout).toBe('1\nwarren exited 141\n');
    expect(r.stderr).not.toMatch(CRASH);
    expect(r.stderr).toContain('warren: stdout closed (EPIPE): the reader went away; ended with SIGTERM');
    expect(pidsWithEnv('WARREN_WORKSPACE', ws)).toEqual([]);

    const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
    const rows = db.prepare('SELECT * FROM runs').all() as Record<string, unknown>[];
    db.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      canceled_by: 'SIGPIPE',
      reason: 'stdout closed (EPIPE): the reader went away; ended with SIGTERM',
    });
    expect(rows[0]?.ended_at).toEqual(expect.any(String));
    // The log kept what the reader did not take.
    expect(fs.readFileSync(String(rows[0]?.log_path), 'utf8')).toMatch(/^1\n2\n3\n/);

    // The fleet (the dashboard's reading of the events) shows the run ended, not running.
    const store = openStore(repo.home);
    try {
      const project = store.listProjects()[0]?.key ?? '';
      const last = lastRun(store.taskEvents(project, 'p1', 50));
      expect(last).toMatchObject({ kind: 'exec', running: false });
      expect(last?.message).toContain('stdout closed (EPIPE)');
    } finally {
      store.close();
    }
    // And the task is free for the next run.
    const next = await repo.warren('exec', 'p1', '--', 'true');
    expect(next.code, next.stderr).toBe(0);
  });

  it('warren printing its own result to a reader that went away: no stack trace, the exit status the command earned', async () => {
    const { repo } = await taskRepo('p2');
    for (const [script, status] of [
      ['$W --json exec p2 -- seq 1 5 | true; echo "warren exited ${PIPESTATUS[0]}"', 0],
      ['$W --json list | true; echo "warren exited ${PIPESTATUS[0]}"', 0],
      ['$W list | true; echo "warren exited ${PIPESTATUS[0]}"', 0],
      ['$W --json show nope | true; echo "warren exited ${PIPESTATUS[0]}"', 2],
      // Both streams closed: the command's output (on stderr with --json) has nowhere to go, so the run ends.
      ['$W --json exec p2 -- seq 1 200000 2>&1 | head -c 1 >/dev/null; echo "warren exited ${PIPESTATUS[0]}"', 141],
    ] as const) {
      const r = await pipeline(repo, script);
      expect(r.stdout, script).toBe(`warren exited ${status}\n`);
      expect(r.stderr, script).not.toMatch(CRASH);
    }
  });
});
