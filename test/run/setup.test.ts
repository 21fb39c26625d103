import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitIn, makeRepo, tmpDir } from '../helpers/repo.js';

/** setup / verify / teardown from warren.yaml, run through the supervisor by new, setup, verify and rm. */

describe('setup', () => {
  it('a failing setup leaves the task setup_failed with its log; exec is refused until `warren setup` passes', async () => {
    const marks = tmpDir('warren-marks-');
    const repo = makeRepo({
      files: {
        'README.md': '# t\n',
        '.env.testing': 'PORT=3000\n',
        'warren.yaml': [
          'setup:',
          '  - { id: ports, run: "echo PORT=$WARREN_PORT > .env.testing && echo rewrote-env" }',
          '  - { id: deps, run: "test -f ok-to-pass || { echo deps-broke >&2; exit 4; }" }',
          '  - { id: never, run: "touch never-ran" }',
          '',
        ].join('\n'),
      },
    });
    const made = await repo.warrenJson<{ state: string; log: string; path: string }>('new', 'feat', 's1');
    expect(made.code).toBe(1);
    expect(made.json.state).toBe('setup_failed');
    const log = fs.readFileSync(made.json.log, 'utf8');
    expect(log).toContain('rewrote-env');
    expect(log).toContain('deps-broke');
    expect(fs.existsSync(path.join(made.json.path, 'never-ran'))).toBe(false);
    // The human form names the log too.
    const shown = await repo.warren('show', 's1');
    expect(shown.stdout).toContain(made.json.log);

    // A setup that rewrote a tracked file shows as a tracked change, never hidden.
    expect(gitIn(made.json.path, 'status', '--porcelain')).toMatch(/^ ?M \.env\.testing$/m);

    const marker = path.join(marks, 'ran');
    const refused = await repo.warrenJson<{ error: { code: string; hint: string } }>(
      'exec',
      's1',
      '--',
      'touch',
      marker,
    );
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('TASK_STATE');
    expect(refused.json.error.hint).toContain('warren setup s1');
    expect(fs.existsSync(marker)).toBe(false);

    const again = await repo.warrenJson<{ state: string; log: string }>('setup', 's1');
    expect(again.code).toBe(1);
    expect(again.json.state).toBe('setup_failed');

    fs.writeFileSync(path.join(made.json.path, 'ok-to-pass'), '');
    const fixed = await repo.warrenJson<{ state: string; log: string }>('setup', 's1');
    expect(fixed.code).toBe(0);
    expect(fixed.json.state).toBe('ready');
    expect(fs.existsSync(fixed.json.log)).toBe(true);
    expect((await repo.warren('exec', 's1', '--', 'touch', marker)).code).toBe(0);
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('--no-setup skips it, says so in an event, and its commands add no risk', async () => {
    const repo = makeRepo({
      files: { 'README.md': '# t\n', 'warren.yaml': 'setup:\n  - { id: a, run: "touch setup-ran && npm ci" }\n' },
    });
    const made = await repo.warrenJson<{ state: string; path: string }>('new', 'feat', 'n1', '--no-setup');
    expect(made.json.state).toBe('ready');
    expect(made.stderr).not.toMatch(/package manager/);
    expect(made.stderr).not.toMatch(/risk medium/);
    expect(fs.existsSync(path.join(made.json.path, 'setup-ran'))).toBe(false);
    const shown = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'n1');
    expect(shown.json.events.map((e) => e.kind)).toContain('setup.skipped');
  });
});

describe('verify', () => {
  it('runs every command, records results, exits 1 only when a required one fails', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# t\n',
        'warren.yaml': [
          'verify:',
          '  - { id: unit, run: "echo unit-ok" }',
          '  - { id: lint, run: [sh, -c, "exit 3"], required: false }',
          '  - { id: slow, run: "sleep 30", timeout: 300ms, required: false }',
          '  - { id: e2e, run: "test -f e2e-ok" }',
          '',
        ].join('\n'),
      },
    });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'v1');
    type V = { passed: boolean; results: { id: string; exitCode: number; required: boolean; timedOut: boolean }[] };
    const failing = await repo.warrenJson<V>('verify', 'v1');
    expect(failing.code).toBe(1);
    expect(failing.json.passed).toBe(false);
    expect(failing.json.results.map((r) => [r.id, r.exitCode, r.required, r.timedOut])).toEqual([
      ['unit', 0, true, false],
      ['lint', 3, false, false],
      ['slow', 143, false, true],
      ['e2e', 1, true, false],
    ]);
    fs.writeFileSync(path.join(made.json.path, 'e2e-ok'), '');
    const passing = await repo.warrenJson<V>('verify', 'v1');
    expect(passing.code).toBe(0);
    expect(passing.json.passed).toBe(true);
    const shown = await repo.warrenJson<{ data: { verify: { passed: boolean } } }>('show', 'v1');
    expect(shown.json.data.verify.passed).toBe(true);
  });
});

describe('teardown', () => {
  it('runs on rm before removal, with the task environment, bounded by its timeout', async () => {
    const marks = tmpDir('warren-marks-');
    const repo = makeRepo({
      files: {
        'README.md': '# t\n',
        'warren.yaml': [
          'kill_grace: 200ms',
          'teardown:',
          `  - { id: dropdb, run: "echo $WARREN_DB_NAME $WARREN_PORT > ${marks}/dropped; test -d \\"$WARREN_WORKSPACE\\" && echo ws-present >> ${marks}/dropped" }`,
          '  - { id: hang, run: "sleep 60", timeout: 300ms }',
          '',
        ].join('\n'),
      },
    });
    const made = await repo.warrenJson<{ ports: { first: number } }>('new', 'feat', 'td');
    const started = Date.now();
    const removed = await repo.warrenJson('rm', 'td');
    expect(removed.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    const dropped = fs.readFileSync(path.join(marks, 'dropped'), 'utf8');
    expect(dropped).toMatch(new RegExp(`^warren_td_[0-9a-f]{10} ${made.json.ports.first}\\nws-present\\n$`));
  });
});
