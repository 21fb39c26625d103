import { formatStatus } from '../../provision/format.js';
import { statusTask } from '../../provision/operations.js';
import type { Register } from '../command.js';

export const registerStatus: Register = (program, run) => {
  program
    .command('status')
    .description('tracked changes, and changes inside provisioned (ignored) paths since they were provisioned')
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        const ctx = await env.project();
        const { remounted: _remounted, ...status } = await statusTask(ctx, rawId);
        return { data: status, human: formatStatus(rawId, status) };
      }),
    );
};
