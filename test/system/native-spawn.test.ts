import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBounded } from '../../src/system/spawn.js';
import { makeRepo, tmpDir } from '../helpers/repo.js';

/**
 * Processes started without forking warren (native/spawn.c, posix_spawn) get what Node's
 * child_process gives them; a warren built without the native starter works and says so.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What a started process sees of how it was started, by `method`. */
async function probe(method: 'posix_spawn' | 'fork', dir: string): Promise<Record<string, string>> {
  if (method === 'fork') process.env.WARREN_SPAWN = 'fork';
  else delete process.env.WARREN_SPAWN;
  // A program found only through the child's own PATH, as child_process looks it up.
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'warren-probe'),
    [
      '#!/bin/sh',
      // The fields of /proc/self/stat after the command name: state ppid pgrp session.
      'set -- $(sed "s/.*) //" /proc/$$/stat)',
      'echo "group_is_self=$([ "$3" = "$$" ] && echo yes || echo no)"',
      'echo "session_is_self=$([ "$4" = "$$" ] && echo yes || echo no)"',
      'grep -E "^(SigIgn|SigBlk):" /proc/$$/status | tr -d "\\t" | tr ":" "="',
      'echo "fds=$(ls /proc/$$/fd | sort -n | tr "\\n" " ")"',
      'echo "cwd=$(pwd)"',
      'echo "var=$PROBE_VAR"',
      'echo "stdin=$(cat)"',
    ].join('\n'),
    { mode: 0o755 },
  );
  const r = await runBounded({ argv: ['warren-probe'], cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, PROBE_VAR: 'x y' }, stdin: 'given', stdout: 'collect', stderr: 'collect' });
  expect(r.stderr.toString()).toBe('');
  expect(r.exitCode).toBe(0);
  return Object.fromEntries(r.stdout.toString().trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

describe('the native starter', () => {
  const before = process.env.WARREN_SPAWN;
  afterEach(() => {
    if (before === undefined) delete process.env.WARREN_SPAWN;
    else process.env.WARREN_SPAWN = before;
  });

  it('gives a process what child_process gives it: its PATH, folder, environment, stdin, own session, default signals, no fd of warren', async () => {
    const dir = tmpDir();
    const { SigIgn: nativeIgnored, ...native } = await probe('posix_spawn', dir);
    const { SigIgn: forkedIgnored, ...forked } = await probe('fork', dir);
    expect(native).toEqual({
      group_is_self: 'yes',
      session_is_self: 'yes',
      SigBlk: '0000000000000000',
      fds: forked.fds,
      cwd: dir,
      var: 'x y',
      stdin: 'given',
    });
    // The same descriptors too: the three given, the one `ls` opens, and what this test's process
    // holds without close-on-exec (the test runner's); none of warren's own pipes.
    expect(forked).toEqual(native);
    // No signal a program can be sent is ignored (Node ignores SIGPIPE: a child that kept that would
    // not die writing to a closed pipe). glibc's posix_spawn leaves its two internal signals, 32 and
    // 33, ignored in the child, as in every program it starts (Rust's Command, Python's
    // os.posix_spawn); glibc's programs install their own handlers for them at start.
    expect(forkedIgnored).toBe('0000000000000000');
    expect(['0000000000000000', '0000000180000000']).toContain(nativeIgnored);
  });

  it('keeps warren running until a child without pipes, or one that closed them, has exited', () => {
    // In a process of its own: a test runner's own handles would keep this one alive regardless.
    // Before the fix, such a process ended in the middle of `await`, with status 0 and no output.
    const script = `
      const { runBounded } = await import(${JSON.stringify(path.join(ROOT, 'dist/system/spawn.js'))});
      const quiet = await runBounded({ argv: ['sleep', '0.3'], stdout: 'ignore', stderr: 'ignore' });
      const closed = await runBounded({ argv: ['sh', '-c', 'exec >&- 2>&-; sleep 0.3; exit 4'], stdout: 'collect', stderr: 'collect' });
      console.log(JSON.stringify([quiet.exitCode, closed.exitCode]));`;
    for (const spawnWith of ['native', 'fork']) {
      const env: NodeJS.ProcessEnv = { ...process.env };
      if (spawnWith === 'fork') env.WARREN_SPAWN = 'fork';
      else delete env.WARREN_SPAWN;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
      expect({ spawnWith, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ spawnWith, status: 0, stdout: '[0,4]\n', stderr: '' });
    }
  });

  it('leaves no pipe open in warren after its processes end', async () => {
    delete process.env.WARREN_SPAWN;
    const fds = (): number => fs.readdirSync('/proc/self/fd').length;
    await runBounded({ argv: ['true'], stdout: 'collect', stderr: 'collect' }); // the first start loads things once
    const open = fds();
    await Promise.all(Array.from({ length: 20 }, () => runBounded({ argv: ['sh', '-c', 'cat; echo out; echo err >&2'], stdin: 'in', stdout: 'collect', stderr: 'collect' })));
    expect(fds()).toBe(open);
  });

  it('is built by scripts/native.js, which warns and fails nothing without a compiler', () => {
    const dir = tmpDir();
    const out = path.join(dir, 'spawn.node');
    const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/native.js'), out], { encoding: 'utf8' });
    expect(built.status).toBe(0);
    const addon = { exports: {} as { spawn?: unknown; reap?: unknown } };
    process.dlopen(addon, out);
    expect(typeof addon.exports.spawn).toBe('function');
    expect(typeof addon.exports.reap).toBe('function');

    const none = path.join(dir, 'none.node');
    const skipped = spawnSync(process.execPath, [path.join(ROOT, 'scripts/native.js'), none], { encoding: 'utf8', env: { ...process.env, CC: 'warren-no-such-compiler' } });
    expect(skipped.status).toBe(0);
    expect(skipped.stderr).toContain('the native process starter was not built');
    expect(skipped.stderr).toContain("Node's child_process");
    expect(fs.existsSync(none)).toBe(false);
  });

  it('missing from a build, `warren new` still makes the task, by fork, and says why (a warning, and spawn.fallback)', () => {
    // A copy of the built command line without dist/native/.
    const install = tmpDir();
    for (const entry of ['bin', 'package.json', 'web', 'dist']) fs.cpSync(path.join(ROOT, entry), path.join(install, entry), { recursive: true });
    fs.rmSync(path.join(install, 'dist/native'), { recursive: true, force: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(install, 'node_modules'));
    const repo = makeRepo();
    const env: NodeJS.ProcessEnv = { ...process.env, WARREN_HOME: repo.home, WARREN_WARM: 'off' };
    delete env.WARREN_SPAWN;
    const run = (...args: string[]): { status: number | null; stdout: string; stderr: string } =>
      spawnSync(process.execPath, [path.join(install, 'bin/warren.js'), ...args], { cwd: repo.root, env, encoding: 'utf8' });

    const made = run('new', 'feat', 'forked');
    expect(made.status).toBe(0);
    expect(made.stdout).toContain('ready: feat/forked');
    expect(made.stderr).toMatch(/^warren: warn: processes start by forking warren, .*dist\/native\/spawn\.node was not built/m);
    expect(execFileSync('git', ['-C', repo.root, 'branch', '--list', 'feat/forked'], { encoding: 'utf8' })).toContain('feat/forked');
    const shown = JSON.parse(run('show', 'forked', '--json').stdout) as { events: { kind: string; level: string }[] };
    expect(shown.events.find((e) => e.kind === 'spawn.fallback')).toMatchObject({ level: 'warn' });

    // Chosen on purpose, fork is not a fallback: nothing to warn about.
    const chosen = spawnSync(process.execPath, [path.join(install, 'bin/warren.js'), 'new', 'feat', 'chosen'], { cwd: repo.root, env: { ...env, WARREN_SPAWN: 'fork' }, encoding: 'utf8' });
    expect(chosen.status).toBe(0);
    expect(chosen.stderr).not.toContain('forking');
  });
});
