import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchIndexPrefix, withScratchIndex } from '../../src/git/scratch-index.js';
import { makeRepo, runCli, tmpDir } from '../helpers/repo.js';

const BUILT = path.resolve(import.meta.dirname, '../../dist/git/scratch-index.js');

/**
 * A warren process killed (SIGKILL: nothing of its own runs after) while its throwaway index is
 * in use, as a kill in the middle of `diff`, `rm --discard` or a squash would leave it. Its
 * temporary folder is `tmp`. Resolves with the folder it left.
 */
async function killedWhileWriting(home: string, tmp: string): Promise<string> {
  const script = `
    import fs from 'node:fs';
    import { withScratchIndex } from ${JSON.stringify(BUILT)};
    await withScratchIndex(${JSON.stringify(home)}, async (env) => {
      fs.writeFileSync(env.GIT_INDEX_FILE, 'DIRC');
      process.stdout.write(env.GIT_INDEX_FILE);
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => undefined);
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_c, s) => resolve(s)));
  expect(signal).toBe('SIGKILL');
  return path.dirname(out);
}

describe('throwaway indexes in the temporary folder', () => {
  it('are named for the WARREN_HOME and the process, this user alone, and gone when the calls end (or throw)', async () => {
    const home = tmpDir('warren-scratch-home-');
    let seen = '';
    await withScratchIndex(home, async (env) => {
      seen = path.dirname(env.GIT_INDEX_FILE);
      fs.writeFileSync(env.GIT_INDEX_FILE, 'DIRC');
      expect(path.dirname(seen)).toBe(os.tmpdir());
      expect(path.basename(seen).startsWith(`${scratchIndexPrefix(home)}${process.pid}-`)).toBe(true);
      expect(fs.statSync(seen).mode & 0o777).toBe(0o700);
    });
    expect(fs.existsSync(seen)).toBe(false);
    await expect(
      withScratchIndex(home, async (env) => {
        seen = path.dirname(env.GIT_INDEX_FILE);
        throw new Error('git failed');
      }),
    ).rejects.toThrow('git failed');
    expect(fs.existsSync(seen)).toBe(false);
  });

  it("`gc` removes what a killed warren of this home left, and keeps a live process's, another home's and a folder holding anything else", async () => {
    const repo = makeRepo();
    const tmp = tmpDir('warren-scratch-tmp-');
    const killed = await killedWhileWriting(repo.home, tmp);
    expect(path.basename(killed).startsWith(scratchIndexPrefix(repo.home))).toBe(true);
    expect(fs.readdirSync(killed)).toEqual(['index']);
    // Another home's, left by a warren killed the same way: that home's gc collects it.
    const theirs = await killedWhileWriting(tmpDir('warren-scratch-other-'), tmp);
    // This home's, but its process (this one) is alive: a tree being written now.
    const live = fs.mkdtempSync(path.join(tmp, `${scratchIndexPrefix(repo.home)}${process.pid}-`));
    fs.writeFileSync(path.join(live, 'index'), 'DIRC');
    // This home's and dead, but holding something that is not git's index: not warren's to remove.
    const holding = await killedWhileWriting(repo.home, tmp);
    fs.writeFileSync(path.join(holding, 'notes.txt'), 'mine\n');

    const gc = await runCli(['--json', 'gc'], { cwd: repo.root, home: repo.home, env: { TMPDIR: tmp } });
    expect(gc.code, gc.stderr).toBe(0);
    const removed = (JSON.parse(gc.stdout) as { removed: { kind: string; path: string }[] }).removed;
    expect(removed.filter((r) => r.kind === 'scratch_index')).toEqual([
      { kind: 'scratch_index', path: killed, action: 'delete-dir' },
    ]);
    expect(fs.existsSync(killed)).toBe(false);
    for (const kept of [theirs, live, holding]) expect(fs.existsSync(kept)).toBe(true);
  });
});
