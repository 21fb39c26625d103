import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { runBounded, spawnDetached, type SpawnResult } from '../../system/spawn.js';
import { findCommand } from '../command-lookup.js';
import { API, apiAnswers, apiRequest } from './api.js';
import { removeTreeOrThrow } from '../../system/remove-tree.js';
import { makeSocketDir, socketDir } from '../../system/socket-path.js';

/**
 * podman, the engine of `sandbox: container`: its command line for what is rare (an image, a
 * container made or removed) and its API service for what is frequent (an exec per command).
 */

/** What a machine without podman is told to install (and configure): docs/configuration.md#sandbox. */
export const PODMAN_HINT =
  'Install it (apt-get install podman runc slirp4netns uidmap), and on a machine whose runc or cgroups need it put `[containers] default_ulimits = []` and `[engine] runtime = "runc"` in /etc/containers/containers.conf; or choose `sandbox: bwrap`.';

/**
 * Null when podman is on PATH, else why not. A look-up, not a run: it is asked before every
 * command of a container task, and a podman that is there but broken says so itself at its
 * first call (SANDBOX_UNAVAILABLE, with its own words).
 */
function podmanProblem(): string | null {
  const found = findCommand('podman', process.env.PATH ?? '', '/');
  return found === null ? 'podman is not installed (not found on PATH)' : null;
}

export async function assertPodman(what: string): Promise<void> {
  const problem = podmanProblem();
  if (problem === null) return;
  throw new WarrenError('RUNNER_UNAVAILABLE', `${what} runs in a container sandbox, and ${problem}; nothing was run.`, {
    hint: PODMAN_HINT,
  });
}

/** `podman ARGS…`, bounded; its stderr in the error when it fails. */
export async function podman(args: readonly string[], timeoutMs = 120_000): Promise<SpawnResult> {
  return runBounded({ argv: ['podman', ...args], timeoutMs });
}

export function podmanFailed(what: string, r: SpawnResult): WarrenError {
  const why = r.stderr.toString().trim().split('\n').slice(-3).join(' ') || `exit ${r.exitCode}`;
  return new WarrenError('SANDBOX_UNAVAILABLE', `${what}: podman said: ${why}; nothing was run.`, {
    hint: PODMAN_HINT,
  });
}

/** podman's API socket for this WARREN_HOME: in its `run` folder, or a short one when that is too deep for a socket. */
export function apiSocket(home: string): string {
  return path.join(socketDir(path.join(home, 'run'), 'podman.sock'.length), 'podman.sock');
}

/**
 * podman's API service on `apiSocket(home)`, started when it does not answer. It ends by itself
 * after two idle minutes (`--time`), so nothing of it outlives the work: the next exec starts it
 * again (about a second). Its own session, not a task's process: it runs no code of a task.
 */
export async function ensureApi(home: string): Promise<string> {
  const socket = apiSocket(home);
  if (await apiAnswers(socket)) return socket;
  makeSocketDir(path.dirname(socket));
  fs.rmSync(socket, { force: true });
  spawnDetached(['podman', 'system', 'service', '--time=120', `unix://${socket}`]);
  for (let waited = 0; waited < 30_000; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    if (await apiAnswers(socket)) return socket;
  }
  throw new WarrenError(
    'SANDBOX_UNAVAILABLE',
    `podman's API service did not answer on ${socket} within 30 s; nothing was run.`,
    {
      hint: `Try \`podman system service --time=0 unix://${socket}\` by hand to see why. ${PODMAN_HINT}`,
    },
  );
}

/** The image warren builds from the host's own files when warren.yaml names none (no registry needed). */
export const BASE_IMAGE = 'localhost/warren-base:1';

/**
 * A skeleton root: `bin lib lib64 sbin` as links into `/usr` (Debian's merged /usr), which every
 * container binds read-only from the host, so the host's node, git and shell run inside;
 * `/etc/passwd` and `/etc/group` of its own, and empty mount points. About 20 kB, imported in
 * under a second, offline.
 */
export async function ensureBaseImage(socket: string): Promise<string> {
  if (await imageExists(socket, BASE_IMAGE)) return BASE_IMAGE;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-image-'));
  try {
    const root = path.join(dir, 'root');
    for (const d of ['etc', 'tmp', 'usr', 'proc', 'dev', 'sys', 'run', 'root', 'home', 'var/tmp']) {
      fs.mkdirSync(path.join(root, d), { recursive: true });
    }
    fs.chmodSync(path.join(root, 'tmp'), 0o1777);
    for (const l of ['bin', 'lib', 'lib64', 'sbin']) fs.symlinkSync(`usr/${l}`, path.join(root, l));
    fs.writeFileSync(
      path.join(root, 'etc/passwd'),
      'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    );
    fs.writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
    const tar = path.join(dir, 'root.tar');
    const packed = await runBounded({
      argv: ['tar', '--owner=0', '--group=0', '--numeric-owner', '-C', root, '-cf', tar, '.'],
      timeoutMs: 60_000,
    });
    if (packed.exitCode !== 0) throw podmanFailed('packing the base image', packed);
    const imported = await podman(['import', tar, BASE_IMAGE]);
    // Another warren may have imported it meanwhile: what counts is that it exists.
    if (imported.exitCode !== 0 && !(await imageExists(socket, BASE_IMAGE))) {
      throw podmanFailed(`making the image ${BASE_IMAGE}`, imported);
    }
    return BASE_IMAGE;
  } finally {
    removeTreeOrThrow(dir, { inside: os.tmpdir() });
  }
}

/** Whether podman has `image` (through its API: no podman process per command). */
export async function imageExists(socket: string, image: string): Promise<boolean> {
  return (await apiRequest(socket, 'GET', `${API}/images/${encodeURIComponent(image)}/exists`)).status === 204;
}
