import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectContainment } from '../../src/system/containment.js';
import { daemonState, startDaemon, stopDaemon } from '../../src/run/daemon.js';
import { isAlive } from '../../src/system/proc.js';
import { tmpDir } from '../helpers/repo.js';

/** The daemons services run as: stopped as a whole, recorded or not. */
describe('service daemons', () => {
  it('a daemon whose record was never written (warren killed right after starting it) is still found and stopped', async () => {
    const base = tmpDir();
    const dir = path.join(base, 'svc');
    const record = startDaemon({
      dir,
      argv: ['sh', '-c', 'sleep 300 & sleep 300; wait'],
      cwd: base,
      env: { PATH: process.env.PATH ?? '' },
      log: path.join(base, 'log'),
      containment: await detectContainment(),
    });
    expect(daemonState(dir).state).toBe('running');
    fs.rmSync(path.join(dir, 'daemon.json'));
    const found = daemonState(dir);
    expect(found.state).toBe('running');
    const stopped = await stopDaemon(dir, 1000);
    expect(stopped.survivors).toEqual([]);
    expect(daemonState(dir).state).toBe('stopped');
    // Reaped by this process's event loop a moment after it died: gone, or a zombie.
    expect(isAlive(record.pid)).toBe(false);
  });

  it('a recorded daemon stops within its grace, with everything it started', async () => {
    const base = tmpDir();
    const dir = path.join(base, 'svc');
    startDaemon({
      dir,
      argv: ['sh', '-c', 'sleep 300 & sleep 300 & wait'],
      cwd: base,
      env: { PATH: process.env.PATH ?? '' },
      log: path.join(base, 'log'),
      containment: await detectContainment(),
    });
    const started = Date.now();
    const stopped = await stopDaemon(dir, 1000);
    expect(stopped.survivors).toEqual([]);
    // Within the grace, not the 300 s sleeps (the slack is for a loaded machine: no speed claim).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(daemonState(dir).state).toBe('stopped');
  });

  it("starts its command with every signal at its default, as a run's (SIGINT and SIGQUIT not ignored by the init's sh)", async () => {
    const base = tmpDir();
    const dir = path.join(base, 'svc');
    const ign = path.join(base, 'ign');
    startDaemon({
      dir,
      argv: ['sh', '-c', `grep SigIgn /proc/self/status > ${ign}; exec sleep 300`],
      cwd: base,
      env: { PATH: process.env.PATH ?? '' },
      log: path.join(base, 'log'),
      containment: await detectContainment(),
    });
    try {
      await expect.poll(() => fs.existsSync(ign) && fs.readFileSync(ign, 'utf8').includes('\n')).toBe(true);
      expect(BigInt(`0x${fs.readFileSync(ign, 'utf8').split(/\s+/)[1]}`) & 0x6n).toBe(0n);
    } finally {
      await stopDaemon(dir, 1000);
    }
  });
});
