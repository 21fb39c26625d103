import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WarrenError } from '../errors.js';
import { openDb, type Db } from '../state/db.js';
import { startNodeHelper, type NodeHelper } from '../system/spawn.js';
import {
  buildId,
  encodeFrame,
  FrameReader,
  json,
  socketPathFits,
  warmSocket,
  type WarmExit,
  type WarmJob,
  type WarmRefusal,
  type WarmRequest,
  type WarmStatus,
} from './warm-protocol.js';
import { endMark, MarkedStream } from './warm-relay.js';

/**
 * `warren warm`: keeps `size` warren processes started and loaded, each waiting for one command
 * (src/cli/warm-worker.ts), and hands them the commands of clients that connect to the socket
 * under WARREN_HOME (src/cli/warm-client.ts). A command line then costs Node's start-up, a
 * connection, and the command's own work: the ~100 ms of loading warren is paid before it asks.
 *
 * Each warm process runs one command and exits; the next is started when it has (started while
 * one runs, it would take the CPU that command needs: measured). Each leads its own process
 * group, so a signal the client passes on reaches the command and what it started, as a
 * terminal's would; a client that goes away without a word counts as a hangup (SIGHUP).
 */
export interface WarmServer {
  socket: string;
  size: number;
  /** Stops taking commands, ends the idle processes, waits for running commands to finish. */
  close(): Promise<void>;
}

interface Slot {
  child: NodeHelper;
  ready: boolean;
}

const BUNDLE = path.dirname(fileURLToPath(import.meta.url));
const WORKER = path.join(BUNDLE, 'warm-worker.js');
/** A warm process that dies before it is ready this many times in a row means a broken install: stop refilling. */
const MAX_FAILED_STARTS = 3;

export async function startWarm(options: { home: string; size: number; log(line: string): void }): Promise<WarmServer> {
  const { home, size, log } = options;
  const socket = warmSocket(home);
  if (!socketPathFits(socket)) {
    throw new WarrenError('WARM_UNAVAILABLE', `the socket path ${socket} is longer than the 107 bytes a unix socket may have; nothing was started.`, {
      hint: 'Use a shorter WARREN_HOME.',
    });
  }
  await claimSocket(socket, log);
  const state = holdState(home, log);

  const build = buildId(BUNDLE);
  const idle: Slot[] = [];
  let starting = 0;
  let busy = 0;
  let failedStarts = 0;
  let closing = false;
  const running = new Set<Promise<unknown>>();
  const children = new Set<NodeHelper>();

  // Processes are started only while no command runs: one loading (~0.35 s of CPU) beside a
  // running command takes the CPU that command needs (measured on 2 cores: one `new` 180 ms
  // slower; 20 `new` at once 4.2× and 5.1× their serialized adds with refills during the burst,
  // 3.3× and 2.5× without). Under a burst the waiting ones run out, the rest run in their own
  // processes, and all are started again once the burst is over.
  const fill = () => {
    if (busy > 0) return;
    while (!closing && failedStarts < MAX_FAILED_STARTS && idle.length + starting < size) startOne();
  };
  const startOne = () => {
    starting++;
    // --no-lazy: every function compiled while it waits, not during the command (in a prototype a
    // `new` took 141–183 ms in the process with it, 178–262 without).
    const child = startNodeHelper(WORKER, ['--no-lazy']);
    children.add(child);
    child.once('close', () => children.delete(child));
    const slot: Slot = { child, ready: false };
    const early: Buffer[] = [];
    const keep = (chunk: Buffer) => early.push(chunk);
    child.stderr?.on('data', keep);
    child.once('message', () => {
      slot.ready = true;
      starting--;
      failedStarts = 0;
      child.stderr?.off('data', keep);
      if (closing) child.disconnect();
      else idle.push(slot);
    });
    let ended = false;
    const failed = (how: string) => {
      starting--;
      failedStarts++;
      const why = Buffer.concat(early).toString('utf8').trim().split('\n').slice(-3).join(' | ');
      log(`a warm process failed to start (${how})${why ? `: ${why}` : ''}${failedStarts >= MAX_FAILED_STARTS ? '; stopped starting more (commands run in their own processes)' : ''}.`);
      setTimeout(fill, 0);
    };
    child.once('error', (err) => {
      if (ended || slot.ready) return;
      ended = true;
      failed(err.message);
    });
    child.once('exit', (code, signal) => {
      if (ended) return;
      ended = true;
      if (slot.ready) {
        const at = idle.indexOf(slot);
        if (at >= 0) idle.splice(at, 1); // an idle one that died: say so, start another
        if (at >= 0 && !closing) log(`a warm process (pid ${child.pid}) ended while idle (${signal ?? `exit ${code}`}); starting another.`);
        setTimeout(fill, 0);
      } else failed(signal ?? `exit ${code}`);
    });
  };

  const take = (conn: net.Socket, request: WarmRequest) => {
    const refuse = (refusal: WarmRefusal) => conn.end(encodeFrame('N', refusal));
    if (request.build !== build) {
      log(`refused a command from another build of warren (${request.build}); it ran in its own process.`);
      return refuse({ reason: 'build', message: `warren warm runs another build of warren (${build}); this command ran in its own process, nothing else changed. Restart \`warren warm\` to serve this one.` });
    }
    if (closing) return refuse({ reason: 'stopping', message: 'warren warm is stopping; this command ran in its own process, nothing else changed.' });
    const slot = idle.shift();
    if (!slot) {
      log(`all ${size} warm process(es) busy: \`warren ${request.argv.join(' ')}\` ran in its own process.`);
      return refuse({ reason: 'busy', message: 'every warm process is busy' });
    }
    busy++;
    // The job goes at once (src/cli/warm-worker.ts prepares while the client says go); the command starts on the go.
    const mark = endMark(randomBytes(12).toString('hex'));
    try {
      slot.child.send({ ...request, end: mark } satisfies WarmJob);
    } catch {
      // It died while waiting: its exit is what the client hears.
    }
    const job = handshake(conn)
      .then(async (go) => {
        if (go) return serve(conn, slot.child, request, mark, log);
        // The client went before its go: the command never started, but the process took on
        // that client's environment, so it cannot wait for another: it exits, and is replaced.
        if (slot.child.connected) slot.child.disconnect();
      })
      .finally(() => {
        busy--;
        running.delete(job);
        fill();
      });
    running.add(job);
  };

  const server = net.createServer((conn) => {
    const reader = new FrameReader();
    const onData = (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (frame.kind === 'P') {
          conn.end(encodeFrame('K', { idle: idle.length, busy, size } satisfies WarmStatus));
        } else if (frame.kind === 'R') {
          conn.off('data', onData);
          take(conn, json<WarmRequest>(frame.body));
        }
        return;
      }
    };
    conn.on('data', onData);
    conn.on('error', () => undefined);
  });
  await listenPrivately(server, socket);
  fill();

  return {
    socket,
    size,
    close: async () => {
      closing = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(socket, { force: true });
      for (const slot of idle.splice(0)) slot.child.disconnect();
      // Every process it started has exited when this resolves: waiting, starting and running ones.
      await Promise.all([...running, ...[...children].map((child) => new Promise((resolve) => child.once('close', resolve)))]);
      state?.close();
    },
  };
}

/**
 * Runs one request in one warm process, passing output, signals and the end between it and the
 * client. The client hears the end when the command is done (its exit status, after its last
 * output); the returned promise resolves when the process has exited, which is when the next
 * warm process starts.
 */
function serve(conn: net.Socket, child: NodeHelper, request: WarmRequest, mark: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const pid = child.pid ?? 0;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // The group has ended already.
    }
  };
  let reported = false;
  const report = (exit: WarmExit) => {
    if (reported) return;
    reported = true;
    if (!conn.destroyed) conn.end(encodeFrame('X', exit));
    log(`ran \`warren ${request.argv.join(' ')}\` in ${request.cwd}: ${exit.signal ?? `exit ${exit.code}`} after ${Date.now() - started} ms (pid ${pid}).`);
  };
  const reader = new FrameReader();
  conn.on('data', (chunk: Buffer) => {
    for (const frame of reader.push(chunk)) if (frame.kind === 'S') signalGroup(json<{ signal: NodeJS.Signals }>(frame.body).signal);
  });
  // The client went away before the end: what a closed terminal does, a hangup for the group.
  conn.on('close', () => {
    if (!reported) signalGroup('SIGHUP');
  });

  const send = (kind: 'O' | 'E') => (chunk: Buffer) => {
    if (!conn.destroyed) conn.write(encodeFrame(kind, chunk));
  };
  const out = new MarkedStream(Buffer.from(mark), send('O'));
  const err = new MarkedStream(Buffer.from(mark), send('E'));
  let done: number | null = null;
  const maybeDone = () => {
    if (done !== null && out.ended && err.ended) report({ code: done, signal: null });
  };
  child.stdout?.on('data', (chunk: Buffer) => out.push(chunk) && maybeDone());
  child.stderr?.on('data', (chunk: Buffer) => err.push(chunk) && maybeDone());
  child.on('message', (message: { done?: number }) => {
    if (typeof message.done !== 'number') return;
    done = message.done;
    maybeDone();
  });
  const streamsClosed = Promise.all([child.stdout, child.stderr].map((s) => (s ? new Promise((r) => s.once('close', r)) : null)));
  const exited = new Promise<WarmExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    child.send({ go: true });
  } catch {
    // It died while set aside: its exit, below, is what the client hears.
  }
  // Died before it said it was done (a crash, a signal): the end is how the process ended.
  return Promise.all([exited, streamsClosed]).then(([exit]) => {
    out.flush();
    err.flush();
    report(exit);
  });
}

/**
 * Sets a warm process aside for the client (A) and waits for its go (G): true then, false if the
 * client went away first (it may have run the command itself; the process is not used).
 */
function handshake(conn: net.Socket): Promise<boolean> {
  return new Promise((resolve) => {
    const reader = new FrameReader();
    const onData = (chunk: Buffer) => {
      if (!reader.push(chunk).some((f) => f.kind === 'G')) return;
      conn.off('data', onData);
      conn.off('close', onClose);
      resolve(true);
    };
    const onClose = () => resolve(false);
    conn.on('data', onData);
    conn.once('close', onClose);
    conn.write(encodeFrame('A', ''));
  });
}

/**
 * Keeps the state database open while warm runs. SQLite checkpoints the write-ahead log when its
 * last connection closes (an fsync); with this one open, a command's close is never the last
 * (closing took 6.0 ms at the end of a `warren new` here, 0.7 ms with it: medians of 11). The log is still checkpointed as it grows
 * (SQLite's wal_autocheckpoint) and when warm stops. Not opened (said): commands close it as usual.
 */
function holdState(home: string, log: (line: string) => void): Db | null {
  try {
    return openDb(home);
  } catch (err) {
    log(`could not keep the state database open (${err instanceof Error ? err.message : String(err)}); each command checkpoints it as it closes it (a few ms more).`);
    return null;
  }
}

/**
 * Takes the socket path: refused while another `warren warm` answers on it; a socket nobody
 * answers on (left by one that was killed) is removed, and said.
 */
async function claimSocket(socket: string, log: (line: string) => void): Promise<void> {
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.dirname(socket), 0o700); // made earlier (a sandboxed run makes it too): this user's alone all the same
  if (!fs.existsSync(socket)) return;
  const answers = await new Promise<boolean>((resolve) => {
    const probe = net.connect(socket);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (answers) {
    throw new WarrenError('WARM_UNAVAILABLE', `another warren warm already serves ${path.dirname(path.dirname(socket))} (it answers on ${socket}); nothing was started.`, {
      hint: 'Stop that one first (ctrl-c in its terminal), or use it: commands already run in its warm processes.',
    });
  }
  fs.rmSync(socket, { force: true });
  log(`removed ${socket}, left by a warren warm that is no longer running.`);
}

/** Listens with the socket readable and writable by this user alone (made so, not chmod-ed after: no moment open to others). */
async function listenPrivately(server: net.Server, socket: string): Promise<void> {
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(umask);
  }
}
