import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, gitIn, tmpDir } from './helpers/repo.js';

/**
 * warren run as an unprivileged user (uid 65534, through setpriv): the real
 * fs.protected_hardlinks refusal for the hardlink fill pass, and the non-root rung of the cow
 * fallback ladder. Needs root to switch users; skipped with the reason otherwise.
 */

const NOBODY = 65534;
const unavailable =
  process.getuid?.() !== 0
    ? 'not root: cannot switch to an unprivileged user'
    : spawnSync('setpriv', ['--version']).status !== 0
      ? 'setpriv (util-linux) is missing'
      : fs.readFileSync('/proc/sys/fs/protected_hardlinks', 'utf8').trim() !== '1'
        ? 'fs.protected_hardlinks is off'
        : null;
if (unavailable) console.warn(`[provision-nonroot] skipped: ${unavailable}`);

function asNobody(cwd: string, home: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(
    'setpriv',
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', `HOME=${home}`, `WARREN_HOME=${home}`, process.execPath, BIN, ...args],
    { cwd, encoding: 'utf8' },
  );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(unavailable !== null)('provisioning as an unprivileged user', () => {
  it('fills what protected_hardlinks refuses to link, and cow falls back saying it is not root', () => {
    const base = tmpDir();
    fs.chmodSync(base, 0o755);
    const root = path.join(base, 'app');
    const home = path.join(base, 'home');
    fs.mkdirSync(root);
    fs.mkdirSync(home);
    gitIn(root, 'init', '-q', '-b', 'main');
    gitIn(root, 'config', 'user.email', 'test@example.invalid');
    gitIn(root, 'config', 'user.name', 'Warren Test');
    fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\nvendor/\n');
    fs.writeFileSync(path.join(root, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: cow }\n  - { path: vendor, mode: hardlink }\n');
    fs.mkdirSync(path.join(root, 'node_modules/a'), { recursive: true });
    fs.writeFileSync(path.join(root, 'node_modules/a/index.js'), 'x\n');
    fs.mkdirSync(path.join(root, 'vendor'));
    fs.writeFileSync(path.join(root, 'vendor/mine.txt'), 'mine\n');
    fs.writeFileSync(path.join(root, 'vendor/roots.txt'), 'root owns this\n');
    gitIn(root, 'add', '-A');
    gitIn(root, 'commit', '-q', '-m', 'init');
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, root, home]);
    // Owned by root and not writable by nobody: with protected_hardlinks=1, link(2) refuses it.
    execFileSync('chown', ['0:0', path.join(root, 'vendor/roots.txt')]);

    const made = asNobody(root, home, '--json', 'new', 'feat', 'one');
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    expect(made.stderr).toContain('vendor: 1 file(s) could not be hard-linked and were copied instead');
    expect(made.stderr).toMatch(/node_modules: cow fell back to cp -a because not root/);

    const shown = JSON.parse(asNobody(root, home, '--json', 'show', 'one').stdout) as {
      data: { provision: { path: string; mode: string; requested: string; linked?: number; filled?: number; fallback?: string }[] };
    };
    const [nm, vendor] = shown.data.provision;
    expect(nm).toMatchObject({ path: 'node_modules', requested: 'cow', mode: 'copy' });
    expect(nm?.fallback).toMatch(/^not root/);
    expect(vendor).toMatchObject({ path: 'vendor', mode: 'hardlink', linked: 1, filled: 1 });
    expect(fs.statSync(path.join(ws, 'vendor/mine.txt')).ino).toBe(fs.statSync(path.join(root, 'vendor/mine.txt')).ino);
    expect(fs.statSync(path.join(ws, 'vendor/roots.txt')).ino).not.toBe(fs.statSync(path.join(root, 'vendor/roots.txt')).ino);
    expect(fs.readFileSync(path.join(ws, 'vendor/roots.txt'), 'utf8')).toBe('root owns this\n');
  });
});
