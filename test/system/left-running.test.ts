import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { gitEnv } from '../../src/git/exec.js';
import { OWNER_ENV, leftRunning, ownerTag, settleLeftRunning } from '../../src/system/left-running.js';
import { procStartTime } from '../../src/util/lockfile.js';

/** What a killed warren left running is found by its owner tag, waited for, and ended after the bound. */
describe('left running', () => {
  const start = (tag: string, seconds: number) =>
    spawn('sleep', [String(seconds)], { env: { ...process.env, [OWNER_ENV]: tag }, stdio: 'ignore', detached: true });

  it("every git warren starts carries this warren's tag", () => {
    expect(gitEnv()[OWNER_ENV]).toBe(ownerTag(process.pid, procStartTime(process.pid)));
  });

  it('waits for a process that ends on its own, and ends one that does not after the bound', async () => {
    const quick = start('1@quick', 0.3);
    const stuck = start('2@stuck', 300);
    expect(leftRunning('1@quick')).toEqual([quick.pid]);
    expect(leftRunning('3@none')).toEqual([]);
    const t0 = Date.now();
    expect(await settleLeftRunning('1@quick', 5000)).toEqual({ found: 1, ended: 0 });
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(await settleLeftRunning('2@stuck', 300)).toEqual({ found: 1, ended: 1 });
    await new Promise((r) => stuck.once('exit', r));
    expect(leftRunning('2@stuck')).toEqual([]);
  });
});
