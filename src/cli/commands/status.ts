import { formatStatus } from '../../provision/status/format.js';
import { statusTask } from '../../provision/operations.js';
import type { Register } from '../command.js';

export const registerStatus: Register = (program, run) => {
  program
    .command('status')
    .description('tracked changes, and changes inside provisioned (ignored) paths since they were provisioned')
    .argument('<id>')
    .option('--files', 'list every changed file inside provisioned paths, not one line per package')
    .action((rawId: string, opts: { files?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project();
        const { remounted: _remounted, ...status } = await statusTask(ctx, rawId);
        return { data: status, human: formatStatus(rawId, status, { files: opts.files === true }) };
      }),
    );
};
