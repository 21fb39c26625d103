import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, tmpDir, type TestRepo } from './helpers/repo.js';

/**
 * `warren new` runs its build (dist/bundle-new/new.cjs) from the V8 code cache the build made
 * beside it (src/cli/code-cache.ts, scripts/code-cache.js): used only when it is that build's and
 * V8 takes it, never written by a command, and when it cannot be used the command still works and
 * says why it is slower.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const BUNDLE = path.join(ROOT, 'dist/bundle-new/new.cjs');
const CACHE = `${BUNDLE}.cache`;

function digest(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A copy of the built command line (node_modules linked), to break its cache without touching the real one. */
function install(): string {
  const dir = tmpDir('warren-cache-');
  for (const entry of ['bin', 'package.json', 'web', 'dist']) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function newTask(at: string, repo: TestRepo, id: string, env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const { NODE_OPTIONS: _options, WARREN_CODE_CACHE_WRITE: _write, ...own } = process.env;
  return spawnSync(process.execPath, [path.join(at, 'bin/warren.js'), 'new', 'feat', id], { cwd: repo.root, env: { ...own, WARREN_HOME: repo.home, WARREN_WARM: 'off', ...env }, encoding: 'utf8' });
}

const WARNING = /^warren: warn: warren new compiled its code without the build's code cache, ~30 ms more: (.*)$/m;

describe("warren new's code cache", () => {
  it('was made by the build for this very bundle, is taken by V8, and is never written by a command', () => {
    const before = digest(CACHE);
    expect(fs.readFileSync(CACHE).subarray(0, 32).toString('hex')).toBe(digest(BUNDLE));
    const repo = makeRepo();
    const made = newTask(ROOT, repo, 'cached');
    expect(made.status, made.stderr).toBe(0);
    // No warning: V8 took the cache (CI fails here if the build did not make it).
    expect(made.stderr).not.toMatch(WARNING);
    expect(digest(CACHE)).toBe(before);
    // The build's interop copies each module's exports once (scripts/bundle.js).
    expect(fs.readFileSync(BUNDLE, 'utf8')).toContain('__warrenInterop');
  });

  it('missing, made for another build, or rejected by V8: the task is made all the same, and the warning says why', () => {
    const repo = makeRepo();
    const missing = install();
    fs.rmSync(path.join(missing, 'dist/bundle-new/new.cjs.cache'));
    const other = install();
    const cache = fs.readFileSync(path.join(other, 'dist/bundle-new/new.cjs.cache'));
    cache[0] = cache[0]! ^ 0xff; // the bundle's digest no longer matches
    fs.writeFileSync(path.join(other, 'dist/bundle-new/new.cjs.cache'), cache);

    const cases: [string, string, NodeJS.ProcessEnv, RegExp][] = [
      [missing, 'missing', {}, /new\.cjs\.cache is missing \(the build did not make it\)/],
      [other, 'other', {}, /new\.cjs\.cache was made for another build of new\.cjs/],
      [ROOT, 'flags', { NODE_OPTIONS: '--max-semi-space-size=2' }, /V8 rejected .*new\.cjs\.cache: .* \(this one runs with --max-semi-space-size=2\)/],
    ];
    for (const [at, id, env, why] of cases) {
      const made = newTask(at, repo, id, env);
      expect(made.status, made.stderr).toBe(0);
      expect(made.stdout).toContain(`ready: feat/${id}`);
      expect(made.stderr.match(WARNING)?.[1], id).toMatch(why);
    }
    const shown = spawnSync(process.execPath, [path.join(ROOT, 'bin/warren.js'), '--json', 'show', 'other'], { cwd: repo.root, env: { ...process.env, WARREN_HOME: repo.home, WARREN_WARM: 'off' }, encoding: 'utf8' });
    const events = (JSON.parse(shown.stdout) as { events: { kind: string; level: string }[] }).events;
    expect(events.find((e) => e.kind === 'startup.uncached')).toMatchObject({ level: 'warn' });
  });
});
