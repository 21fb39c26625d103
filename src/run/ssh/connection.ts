import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ERROR_CODES, WarrenError, type ErrorCode } from '../../errors.js';
import { runBounded, type SpawnResult } from '../../system/spawn.js';
import { shellCommand } from '../../util/shell.js';
import { findCommand } from '../command-lookup.js';
import type { Host } from './hosts.js';
import type { RemoteReply, RemoteRequest } from './protocol.js';
import { makeSocketDir, socketDir } from '../../system/socket-path.js';

/**
 * One multiplexed SSH connection per host: a master (ControlMaster, ControlPersist) whose socket
 * is in `$WARREN_HOME/run/ssh/` (0700), started by a control request and reused by every request
 * and run after it (0.05–0.13 s a command here against 0.4–0.5 s for a new connection). A run's
 * ssh is only ever a client of it: a master started inside a run's namespace would die with it.
 */

const PERSIST_SECONDS = 300;

/** The hosts whose connection this process has checked (`WARREN_HOME` and name). */
const connected = new Set<string>();

/** The folder of the control sockets and of the host keys warren accepted (trust on first use). */
export function sshDir(home: string): string {
  const dir = path.join(home, 'run', 'ssh');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}

/**
 * The longest control socket name below its folder: a host's name (HOST_NAME: 32), `.sock`, and
 * the 17 characters ssh adds to the master's socket while it binds it.
 */
const CONTROL_TAIL = 32 + '.sock'.length + 17;

/**
 * The host's control socket (its name is checked: HOST_NAME): in warren's ssh folder, or in a
 * short folder of this user's when WARREN_HOME is too deep for a socket (src/system/socket-path.ts).
 */
function socketOf(dir: string, host: Host): string {
  const sockets = socketDir(dir, CONTROL_TAIL);
  if (sockets !== dir) makeSocketDir(sockets);
  return path.join(sockets, `${host.name}.sock`);
}

/** ssh's options for `host`, its socket in warren's folder; `master` for the one that holds the connection. */
function options(home: string, host: Host, master: boolean): string[] {
  const dir = sshDir(home);
  return [
    '-o', 'BatchMode=yes',
    '-o', 'LogLevel=ERROR',
    '-o', 'StrictHostKeyChecking=accept-new',
    '-o', `UserKnownHostsFile="${path.join(dir, 'known_hosts')}" ~/.ssh/known_hosts`,
    '-o', `ControlPath=${socketOf(dir, host)}`,
    '-o', master ? 'ControlMaster=yes' : 'ControlMaster=no',
    ...(master ? ['-o', `ControlPersist=${PERSIST_SECONDS}`, '-o', 'ServerAliveInterval=15'] : []),
    ...(host.port === undefined ? [] : ['-p', String(host.port)]),
    ...(host.identity === undefined ? [] : ['-i', host.identity, '-o', 'IdentitiesOnly=yes']),
  ]; // prettier-ignore
}

/** The command line that runs the host's warren with `args`, its WARREN_HOME set when the host names one. */
export function remoteWarren(host: Host, args: readonly string[]): string {
  return shellCommand([
    ...(host.home === undefined ? [] : ['env', `WARREN_HOME=${host.home}`]),
    ...(host.warren ?? ['warren']),
    ...args,
  ]);
}

/** The argv of a client of the host's connection that runs `command` there (a run's, supervised by the runner). */
export function clientArgv(home: string, host: Host, command: string): string[] {
  return ['ssh', ...options(home, host, false), '--', host.ssh, command];
}

/** What git is given as GIT_SSH_COMMAND to push and fetch over the host's connection. */
export function gitSshCommand(home: string, host: Host): string {
  return shellCommand(['ssh', ...options(home, host, false)]);
}

/** The URL git pushes to and fetches from: `dir` on the host. */
export function gitUrl(host: Host, dir: string): string {
  const at = host.ssh.lastIndexOf('@');
  const user = at === -1 ? '' : `${host.ssh.slice(0, at + 1)}`;
  const name = host.ssh.slice(at + 1);
  return `ssh://${user}${name.includes(':') ? `[${name}]` : name}${host.port === undefined ? '' : `:${host.port}`}${dir}`;
}

/**
 * The host's connection, up: reused when its master answers, else made (RUNNER_UNAVAILABLE,
 * exit 2, when ssh is not installed here or the host does not answer; nothing is changed).
 */
export async function connect(home: string, host: Host, what: string): Promise<void> {
  // Checked once a command: the master answered a moment ago (a lost one fails the request, which says so).
  const key = `${home}\0${host.name}`;
  if (connected.has(key)) return;
  if (findCommand('ssh', process.env.PATH ?? '', '/') === null) {
    throw new WarrenError(
      'RUNNER_UNAVAILABLE',
      `${what} runs on host ${host.name} over SSH, and ssh is not installed here; nothing was changed.`,
      {
        hint: 'Install the OpenSSH client (`apt-get install openssh-client`).',
      },
    );
  }
  connected.add(key);
  // A master listening on its socket is up (as `ssh -O check` would say, without a process).
  if (await listening(socketOf(sshDir(home), host))) return;
  // A master killed (a lost connection) leaves its socket: a new master cannot bind over it.
  fs.rmSync(socketOf(sshDir(home), host), { force: true });
  // -f: the master goes to the background once it is connected; its output is closed then.
  const master = await runBounded({
    argv: ['ssh', ...options(home, host, true), '-f', '-N', '--', host.ssh],
    stdout: 'ignore',
    timeoutMs: 30_000,
    drainMs: 1_000,
  });
  if (master.exitCode !== 0) {
    connected.delete(key);
    const why = master.timedOut
      ? 'no answer within 30s'
      : master.stderr.toString().trim().split('\n').slice(-2).join(' ') || `ssh exited ${master.exitCode}`;
    throw new WarrenError(
      'RUNNER_UNAVAILABLE',
      `${what} runs on host ${host.name} (${host.ssh}), which could not be reached: ${why}; nothing was changed.`,
      {
        hint: `Check that \`ssh${host.port === undefined ? '' : ` -p ${host.port}`} ${host.ssh} true\` works with the host's key (hosts.${host.name} in $WARREN_HOME/config.yaml).`,
        details: { host: host.name },
      },
    );
  }
}

/** True when something accepts connections on the unix socket `file` (a master that died leaves its file, refusing). */
function listening(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(5_000, () => done(false));
  });
}

/** Ends the host's connection (tests, and a host whose connection is stale). */
export async function disconnect(home: string, host: Host): Promise<void> {
  await runBounded({
    argv: ['ssh', ...options(home, host, false), '-O', 'exit', '--', host.ssh],
    stdout: 'ignore',
    stderr: 'ignore',
    timeoutMs: 10_000,
  });
}

/**
 * One request to the host's warren (`warren runner --stdio`), its reply's data; the remote's
 * refusal comes back as the same error (its code, the host named), a lost connection as REMOTE_FAILED.
 */
export async function request<T>(home: string, host: Host, req: RemoteRequest, timeoutMs = 600_000): Promise<T> {
  return (await openRequest(home, host, `task ${'id' in req ? req.id : ''}`.trim(), timeoutMs)).send<T>(req);
}

/** A host's warren started ahead of its request: `send` gives it the frame, `close` ends it unused. */
export interface OpenRequest {
  send<T>(req: RemoteRequest): Promise<T>;
  /** Ends the host's warren if no frame was sent (it reads no request, changes nothing, and exits). */
  close(): void;
}

/**
 * Starts the host's warren now and sends it its request later: its start (a node process there,
 * a third of a second) overlaps what this side does meanwhile (`new`'s worktree here).
 */
export async function openRequest(home: string, host: Host, what: string, timeoutMs = 600_000): Promise<OpenRequest> {
  await connect(home, host, what);
  let give: (frame: string) => void = () => undefined;
  const frame = new Promise<string>((resolve) => (give = resolve));
  const running = runBounded({
    argv: clientArgv(home, host, remoteWarren(host, ['runner', '--stdio'])),
    stdin: { later: frame },
    timeoutMs,
  });
  let sent = false;
  return {
    close: () => give(''),
    async send<T>(req: RemoteRequest): Promise<T> {
      if (sent) throw new Error('openRequest: one request per host process');
      sent = true;
      give(`${JSON.stringify(req)}\n`);
      return replyData<T>(host, req, await running, timeoutMs);
    },
  };
}

function replyData<T>(host: Host, req: RemoteRequest, run: SpawnResult, timeoutMs: number): T {
  const reply = lastReply(run.stdout.toString());
  if (reply === null) {
    const said = run.stderr.toString().trim().split('\n').slice(-3).join(' | ');
    throw new WarrenError(
      'REMOTE_FAILED',
      `host ${host.name} gave no answer to ${req.op}${run.timedOut ? ` within ${timeoutMs}ms` : ` (ssh exited ${run.exitCode ?? run.signal})`}${said ? `: ${said}` : ''}.`,
      { hint: `Check that the host runs warren: \`ssh ${host.ssh} ${remoteWarren(host, ['--version'])}\`.` },
    );
  }
  if (reply.ok) return reply.data as T;
  const code: ErrorCode = reply.error.code in ERROR_CODES ? (reply.error.code as ErrorCode) : 'REMOTE_FAILED';
  throw new WarrenError(code, `on host ${host.name}: ${reply.error.message}`, {
    ...(reply.error.hint === undefined ? {} : { hint: reply.error.hint }),
  });
}

/** The reply frame: the last line of the remote's output that parses as one. */
function lastReply(stdout: string): RemoteReply | null {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const parsed = JSON.parse(lines[i] ?? '') as RemoteReply;
      if (typeof parsed === 'object' && parsed !== null && typeof parsed.ok === 'boolean') return parsed;
    } catch {
      // not a frame
    }
  }
  return null;
}
