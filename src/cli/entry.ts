import { prefetchFor } from './prefetch.js';

/**
 * What both entries of the command line do first (src/cli/bin.ts, src/cli/bin-new.ts), before
 * the rest of their code has loaded; returns the command's arguments.
 *
 * A reader that went away (`warren list | head -1`) makes writes to stdout or stderr fail with
 * EPIPE. That is not warren's failure and must not end it with a stack trace: what is left to
 * print goes nowhere, and the exit status still says how the command ended. A supervised run
 * hears it too, and ends its command (src/run/supervisor.ts).
 *
 * Almost every command starts by finding the repository (one git call), and `new` then reads
 * its branches (another): those calls start here, and git runs while the rest of the command
 * line's code loads (about 50 ms of a command's start).
 */
export function startCommandLine(): string[] {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const argv = process.argv.slice(2);
  void prefetchFor(argv, process.cwd());
  return argv;
}
