import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands/all.js';
import { makeRepo, tmpDir } from './helpers/repo.js';

/**
 * `warren new` runs from a build of its own (src/cli/bin-new.ts, dist/bundle-new/new.cjs), every other
 * command from the whole command line's (dist/bundle/): held here to `new` alone, to the same
 * behaviour, and to being the one `bin/warren.js` loads.
 */

const ROOT = path.resolve(import.meta.dirname, '..');

/** A copy of the installed command line (bin/, dist/, package.json; node_modules linked) without the given files. */
function installedWithout(...missing: string[]): string {
  const dir = tmpDir('warren-entry-');
  for (const part of ['bin', 'dist', 'package.json']) fs.cpSync(path.join(ROOT, part), path.join(dir, part), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  for (const rel of missing) fs.rmSync(path.join(dir, rel), { recursive: true });
  return dir;
}

function warrenAt(install: string, cwd: string, home: string, ...args: string[]): { code: number; stdout: string } {
  try {
    const stdout = execFileSync(process.execPath, [path.join(install, 'bin/warren.js'), ...args], { cwd, env: { ...process.env, WARREN_HOME: home, WARREN_WARM: 'off' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, stdout };
  } catch (err) {
    return { code: (err as { status: number }).status, stdout: String((err as { stdout: string }).stdout) };
  }
}

describe("the command line's entries", () => {
  it("new's build holds the new command and no other", () => {
    const dir = path.join(ROOT, 'dist/bundle-new');
    const code = fs
      .readdirSync(dir)
      .filter((f) => !f.endsWith('.cache')) // V8's compiled form of new.cjs, made by the build
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');
    const names = COMMANDS.map((register) => register.name);
    expect(names).toContain('registerNew');
    for (const name of names) expect(code.includes(name), name).toBe(name === 'registerNew');
  });

  it('warren new is run by its own build, and every other command by the whole one', () => {
    const repo = makeRepo();
    const noWhole = installedWithout('dist/bundle/bin.js');
    expect(warrenAt(noWhole, repo.root, repo.home, 'new', 'feat', 'one').code).toBe(0);
    expect(warrenAt(noWhole, repo.root, repo.home, 'list').code).not.toBe(0);
    const noNew = installedWithout('dist/bundle-new');
    expect(warrenAt(noNew, repo.root, repo.home, 'new', 'feat', 'two').code).not.toBe(0);
    expect(warrenAt(noNew, repo.root, repo.home, 'list').stdout).toContain('feat/one');
  });

  it('new says the same through either build: its help, and a refusal', async () => {
    const repo = makeRepo();
    const own = await repo.warren('new', '--help');
    const whole = await repo.warren('help', 'new');
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('Usage: warren new');
    expect(own.stdout).toBe(whole.stdout);
    const everything = await repo.warren('--help');
    for (const name of ['new', 'list', 'land', 'serve', 'completion']) expect(everything.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    const refused = await repo.warren('new', 'feat', 'bad..id');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Nothing was created.');
  });
});
