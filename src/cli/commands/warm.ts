import { WarrenError } from '../../errors.js';
import { assertOwnHome, warrenHome } from '../../state/db.js';
import type { Register } from '../command.js';

const MAX_SIZE = 32;

function parseSize(raw: string): number {
  const size = Number(raw);
  if (!/^\d+$/.test(raw) || size < 1 || size > MAX_SIZE) {
    throw new WarrenError('USAGE', `--processes ${JSON.stringify(raw)} is not a number from 1 to ${MAX_SIZE}; nothing was started.`);
  }
  return size;
}

/**
 * `warren warm`: warm processes for this WARREN_HOME's command lines (src/cli/warm-server.ts).
 * Like `serve`, the handler returns once it listens and the open socket keeps the process up
 * until SIGINT/SIGTERM; what it does (each command, each fallback) it says on stderr.
 */
export const registerWarm: Register = (program, run) => {
  program
    .command('warm')
    .description('keep warren loaded in waiting processes, so that this WARREN_HOME\'s commands start without loading it (ctrl-c to stop)')
    .option('--processes <n>', `how many commands can start warm at once (1–${MAX_SIZE})`, '2')
    .action((opts: { processes: string }) =>
      run(async (env) => {
        const size = parseSize(opts.processes);
        const home = warrenHome();
        assertOwnHome(home);
        const { startWarm } = await import('../warm-server.js');
        const server = await startWarm({ home, size, log: (line) => env.log(`warren warm: ${line}`) });
        const stop = () => {
          env.log('warren warm: stopping (commands still running finish first).');
          void server.close().finally(() => process.exit(0));
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        return {
          data: { socket: server.socket, processes: server.size, pid: process.pid },
          human: `warren warm: ${server.size} warm process(es) for the commands of ${home} (socket ${server.socket})\n(ctrl-c to stop)`,
        };
      }),
    );
};
