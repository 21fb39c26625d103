import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EGRESS_SOCKET_TAIL } from '../../src/run/egress.js';
import { removeSocketDir } from '../../src/system/socket-path.js';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, makeRepo, tmpDir, trustRepo } from '../helpers/repo.js';

/**
 * A container task's sockets (podman's API, the egress proxy's) under a deep WARREN_HOME: a unix
 * socket's path holds 107 bytes. Where WARREN_HOME is too deep they go to a short folder of this
 * user's (src/system/socket-path.ts), and `warren land` lands through the gate, and exits.
 */
const noPodman = unavailable(import.meta.filename, 'podman');

/** The CLI as a process, killed after `bound` ms: a bound for a loaded machine, and the sign of a command that did not exit by itself. */
function warren(
  args: string[],
  cwd: string,
  home: string,
  bound = 180_000,
): Promise<{ code: number | null; killed: boolean; stdout: string; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, WARREN_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stdout = '';
    let killed = false;
    const timer = setTimeout(() => ((killed = true), child.kill('SIGKILL')), bound);
    child.stdout.setEncoding('utf8').on('data', (d: string) => ((stdout += d), (out += d)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, killed, stdout, out })));
  });
}

/** A WARREN_HOME of exactly `length` bytes, below this test's own folder. */
function homeOf(length: number): string {
  const base = tmpDir('warren-deep-');
  const home = path.join(base, 'h'.repeat(length - base.length - '/home'.length - 1), 'home');
  fs.mkdirSync(home, { recursive: true });
  expect(Buffer.byteLength(home)).toBe(length);
  return home;
}

describe.skipIf(noPodman !== null)('a container gate under a deep WARREN_HOME', () => {
  // 44 bytes: the proxy's socket would have been 112 bytes (the land that never exited);
  // 150: podman's API socket too (the gate bounced: podman's service did not answer).
  it.each([44, 150])(
    'WARREN_HOME of %i bytes: the task lands through the gate, with the egress proxy, and land exits',
    { timeout: 900_000 },
    async (length) => {
      const home = homeOf(length);
      const repo = makeRepo({
        trusted: false,
        files: {
          'README.md': '# main\n',
          'warren.yaml':
            'sandbox: { kind: container, allow: [registry.npmjs.org] }\nverify:\n  - { id: test, run: "test -n \\"$HTTP_PROXY\\"" }\n',
        },
      });
      trustRepo(repo.root, home);
      onTestFinished(() => {
        const names = spawnSync('podman', ['ps', '-aq', '--filter', `label=warren.home=${home}`], { encoding: 'utf8' });
        const ids = names.stdout.split('\n').filter(Boolean);
        if (ids.length > 0) spawnSync('podman', ['rm', '-f', '-t', '0', ...ids]);
        // The short folders that stood for this home's (the test's folder itself goes with tmpDir).
        removeSocketDir(path.join(home, 'run'), 'podman.sock'.length);
        const containers = path.join(home, 'containers');
        for (const id of fs.existsSync(containers) ? fs.readdirSync(containers) : [])
          removeSocketDir(path.join(containers, id, 'sockets'), EGRESS_SOCKET_TAIL);
      });
      const made = await warren(['--json', 'new', 'feat', 'a'], repo.root, home);
      expect(made.code, made.out).toBe(0);
      const ws = (JSON.parse(made.stdout) as { path: string }).path;
      fs.writeFileSync(path.join(ws, 'README.md'), '# changed\n');
      expect((await warren(['checkpoint', 'a', '-m', 'change'], repo.root, home)).code).toBe(0);

      const landed = await warren(['land', 'a'], repo.root, home);
      expect(landed.killed, `warren land did not exit by itself:\n${landed.out}`).toBe(false);
      expect(landed.code, landed.out).toBe(0);
      expect(landed.out).toMatch(/landed a on main/);
      expect(repo.git('show', 'main:README.md')).toBe('# changed');
    },
  );
});
