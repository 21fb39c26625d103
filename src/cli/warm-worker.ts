import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { preloadDriver } from '../state/db.js';
import { runBounded } from '../system/spawn.js';
import { COMMANDS } from './commands/all.js';
import { main, prepareMain } from './main.js';
import { prefetchFor } from './prefetch.js';
import type { WarmJob } from './warm-protocol.js';

// A warm process of `warren warm` (src/cli/warm-server.ts): started with all of warren loaded
// (and compiled: the server starts it with --no-lazy), it waits for one command, takes on the
// client's arguments, folder, environment and umask, runs the command as the command line
// would, and exits. One command per process: nothing one command leaves in memory (a cache,
// a prefetched answer, an open database) can reach another.

for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

let started = false;
// warren warm went away before a command started: nothing to do.
process.on('disconnect', () => {
  if (!started) process.exit(0);
});

// What a command's first calls would load or set up, done once before any command comes, on
// nothing a command can see (each measured in a --no-lazy process, first call against a later
// one): the database driver on an in-memory database (the first open 5.5 → 1.5 ms), a listen on
// a free loopback port and its close (the port checks of src/run/ports.ts: the first bind loads
// Node's cluster module, ~10 ms), a git that prints its version (the first git call ~21 → ~18
// ms), and Node's modules below (~5.5 ms → 0.2).
preloadDriver();
// The command line itself, all of it, built while nothing waits for it (its --repo default is set when the command comes).
const prepared = prepareMain(COMMANDS);
await new Promise<void>((resolve) => {
  const probe = net.createServer();
  probe.once('error', () => resolve());
  probe.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve()));
});
await runBounded({ argv: ['git', '--version'], stdout: 'ignore', stderr: 'ignore', timeoutMs: 10_000 });
// Node's own modules that a command's first calls would load (found by comparing
// process.moduleLoadList before and after a `warren new`): the performance timer's and rmSync's.
performance.now();
fs.rmSync(path.join(os.tmpdir(), `warren-warm-${randomUUID()}`), { force: true });

// The job comes first: the process takes on the client's environment, folder, umask and
// arguments and starts the repository's git call (read-only) while warren warm waits for the
// client's go; the command itself runs on the go, and only then. No go (the client went): exit.
process.once('message', (request: WarmJob) => {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, request.env);
  process.umask(request.umask);
  process.argv = [process.argv[0] ?? process.execPath, request.entry, ...request.argv];
  let cannotEnter: string | null = null;
  try {
    process.chdir(request.cwd);
    // As the command line's entry does (src/cli/bin.ts): the command's first git calls start now.
    void prefetchFor(request.argv, request.cwd);
  } catch (err) {
    cannotEnter = `warren: cannot enter ${request.cwd} (${(err as NodeJS.ErrnoException).code ?? String(err)}); nothing was run.\n`;
  }
  process.once('message', () => {
    started = true;
    const run = async (): Promise<number> => {
      if (cannotEnter === null) return main(request.argv, prepared);
      process.stderr.write(cannotEnter);
      return 1;
    };
    void run().then((code) => {
      process.exitCode = code;
      // The command is done: say so now, not when this process has wound down (in a timeline, 80
      // ms passed between a command's end and its client's exit when the end was the exit; ~26 now).
      // The mark ends each stream after everything written before it (pipe writes are synchronous
      // on Linux), so warren warm knows it has passed on all the output before it reports the end.
      process.stdout.write(request.end);
      process.stderr.write(request.end);
      process.send?.({ done: code }, () => process.disconnect());
    });
  });
});
if (process.connected) process.send?.('ready');
