import fs from 'node:fs';
import net from 'node:net';
import { warrenHome } from '../state/home.js';
import {
  buildId,
  commandOf,
  encodeFrame,
  FrameReader,
  json,
  WARM_COMMANDS,
  warmSocket,
  type WarmExit,
  type WarmRefusal,
  type WarmRequest,
} from './warm-protocol.js';

// bin/warren.js chooses the command line's entry by the command (src/cli/bin-new.ts).
export { commandOf };

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/**
 * Runs the command in a process `warren warm` keeps ready (all of warren loaded), when one runs
 * for this WARREN_HOME and the command is one it may run; returns its exit status, or null when
 * the command line must run the command itself. Nothing is run twice: null comes only before
 * this client has said go (src/cli/warm-protocol.ts), and the command starts only on the go.
 *
 * The warm process takes this process's arguments, folder, whole environment and umask, so the
 * command does what it would do here. Not delegated: a Node started with options of its own
 * (`NODE_OPTIONS`, `node --inspect …`: warren itself would run differently), WARREN_WARM=off,
 * a socket that belongs to another user.
 */
export async function runWarm(argv: readonly string[], bundleDir: string): Promise<number | null> {
  if (process.env.WARREN_WARM === 'off' || (process.env.NODE_OPTIONS ?? '') !== '' || process.execArgv.length > 0) return null;
  const command = commandOf(argv);
  if (command === null || !WARM_COMMANDS.has(command)) return null;
  const socket = warmSocket(warrenHome());
  let stat: fs.Stats;
  try {
    stat = fs.statSync(socket);
  } catch {
    return null; // no warren warm here: the usual case
  }
  if (!stat.isSocket() || stat.uid !== process.getuid?.()) return null;

  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    return null; // a folder removed under this shell: the command line says so itself
  }
  const request: WarmRequest = {
    build: buildId(bundleDir),
    argv: [...argv],
    entry: process.argv[1] ?? '',
    cwd,
    env: Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
    umask: process.umask(),
  };
  // A reader that went away (`warren list | head -1`): as in src/cli/bin.ts, not a failure of warren's.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  return new Promise((resolve) => {
    const conn = net.connect(socket);
    const reader = new FrameReader();
    let accepted = false;
    let settled = false;
    const onSignal = (signal: NodeJS.Signals) => conn.write(encodeFrame('S', { signal }));
    const settle = (value: number | null) => {
      if (settled) return;
      settled = true;
      for (const signal of FORWARDED) process.off(signal, onSignal);
      resolve(value);
    };
    conn.on('connect', () => conn.write(encodeFrame('R', request)));
    conn.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (frame.kind === 'A') {
          accepted = true;
          for (const signal of FORWARDED) process.on(signal, onSignal);
          conn.write(encodeFrame('G', ''));
        } else if (frame.kind === 'O') process.stdout.write(frame.body);
        else if (frame.kind === 'E') process.stderr.write(frame.body);
        else if (frame.kind === 'N') {
          const refusal = json<WarmRefusal>(frame.body);
          // Busy (every warm process taken) is only slower: said by `warren warm`, not here.
          if (refusal.reason !== 'busy') process.stderr.write(`warren: ${refusal.message}\n`);
          conn.destroy();
          settle(null);
        } else if (frame.kind === 'X') {
          const exit = json<WarmExit>(frame.body);
          conn.destroy(); // the last frame: warren warm has ended its side, nothing is left to say
          settle(exit.code ?? 1);
          // Ended by a signal: end the same way, so that whoever started this sees what a local run shows.
          if (exit.signal !== null) process.kill(process.pid, exit.signal);
        }
      }
    });
    conn.on('error', (err: NodeJS.ErrnoException) => {
      if (!accepted) {
        process.stderr.write(
          `warren: ${socket} did not answer (${err.code ?? err.message}): warren warm is not running there. This command ran in its own process; nothing else changed. Start \`warren warm\` again, or remove the file.\n`,
        );
        settle(null);
      }
    });
    conn.on('close', () => {
      if (accepted && !settled) {
        process.stderr.write(
          'warren: the warm process running this command went away before it said how the command ended (was `warren warm` stopped?). What it did is in `warren list` and the events.\n',
        );
        settle(1);
      } else settle(null);
    });
  });
}
