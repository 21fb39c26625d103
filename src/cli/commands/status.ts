import { formatStatus } from '../../provision/status/format.js';
import { statusTask } from '../../provision/operations.js';
import { requireTask } from '../../workspace/tasks.js';
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
        // Copied env files whose keys named the main checkout's services, set to the task's own at `new`.
        const envRewritten = requireTask(ctx, rawId).data.servicesEnvRewritten ?? [];
        const human = formatStatus(rawId, status, { files: opts.files === true });
        return {
          data: { ...status, envRewritten },
          human:
            envRewritten.length === 0
              ? human
              : `${human}\n${envRewritten.map((r) => `${r.file}: ${r.keys.join(', ')} set to this task's services (they named the main checkout's)`).join('\n')}`,
        };
      }),
    );
};
