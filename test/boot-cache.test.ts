import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootKey, recall, remember } from '../src/system/boot-cache.js';
import { unavailable } from './helpers/capabilities.js';
import { makeRepo, runCli, tmpDir } from './helpers/repo.js';

/**
 * The remembered namespace probes: the key moves with every fact the answer depends on, a
 * remembered answer is used (no probe process), and a refusal is never remembered.
 */

const isString = (v: unknown): v is string => typeof v === 'string';

describe('boot key', () => {
  it('is stable, and changes with PATH and with what the caller adds', () => {
    const key = bootKey();
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(bootKey()).toBe(key);
    expect(bootKey(['/some/home', '42'])).not.toBe(key);
    const saved = process.env.PATH;
    try {
      process.env.PATH = `/nowhere:${saved ?? ''}`;
      expect(bootKey()).not.toBe(key);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('recalls what was remembered under the same key only, and ignores what does not validate', () => {
    const dir = tmpDir('warren-bootcache-');
    remember(dir, 'probe', 'k1', 'yes');
    expect(recall(dir, 'probe', 'k1', isString)).toBe('yes');
    expect(recall(dir, 'probe', 'k2', isString)).toBeUndefined();
    expect(recall(dir, 'probe', null, isString)).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'probe-k3.json'), '{"not":"a string"}');
    expect(recall(dir, 'probe', 'k3', isString)).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'probe-k4.json'), 'torn');
    expect(recall(dir, 'probe', 'k4', isString)).toBeUndefined();
  });
});

/** A `setpriv` first on PATH that logs each call, then runs the real one. */
function loggingSetpriv(): { bin: string; log: string } {
  const bin = tmpDir('warren-setpriv-');
  const log = path.join(bin, 'calls.log');
  const real = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));
  if (!real) throw new Error('no setpriv on this machine');
  fs.writeFileSync(path.join(bin, 'setpriv'), `#!/bin/sh\necho "$*" >> "${log}"\nexec ${real} "$@"\n`, { mode: 0o755 });
  return { bin, log };
}

const probeCalls = (log: string): string[] =>
  fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => / true$/.test(l) && l.includes('unshare'))
    : [];

const noSetpriv = unavailable(import.meta.filename, 'setpriv');

describe.skipIf(noSetpriv !== null)('warren exec remembers the containment probe', () => {
  it('probes on the first run only, and each run is still contained the same way', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'c1')).code).toBe(0);
    const { bin, log } = loggingSetpriv();
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
    const run = async () => {
      const r = await runCli(['--json', 'exec', 'c1', '--', 'true'], { cwd: repo.root, home: repo.home, env });
      expect(r.code, r.stderr).toBe(0);
      const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
      try {
        const row = db
          .prepare('SELECT containment FROM runs WHERE id = ?')
          .get((JSON.parse(r.stdout) as { runId: string }).runId) as { containment: string };
        return row.containment;
      } finally {
        db.close();
      }
    };
    const first = await run();
    const probesAfterFirst = probeCalls(log).length;

    expect(await run()).toBe(first);
    if (first === 'process-group') {
      // A refusal is not remembered: each run tries again.
      expect(probeCalls(log).length).toBe(probesAfterFirst * 2);
      return;
    }
    expect(probesAfterFirst).toBe(1);
    expect(probeCalls(log).length).toBe(1);
    const remembered = fs.readdirSync(path.join(repo.home, 'cache')).filter((f) => f.startsWith('containment-'));
    expect(remembered).toHaveLength(1);
    // Another PATH (other unshare/setpriv binaries) is another key: probed again.
    const r = await runCli(['--json', 'exec', 'c1', '--', 'true'], {
      cwd: repo.root,
      home: repo.home,
      env: { PATH: `${bin}:/usr/local/sbin:${process.env.PATH ?? ''}` },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(probeCalls(log).length).toBe(2);
  });
});
