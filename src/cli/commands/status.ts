import { formatStatus } from '../../provision/status/format.js';
import { statusView } from '../../views/tasks.js';
import { conflictLine } from '../../conflicts/view.js';
import type { Register } from '../command.js';
import { serviceLine } from '../format.js';
import { paintStatus } from '../highlight.js';

export const registerStatus: Register = (program, run) => {
  program
    .command('status')
    .description('tracked changes, and changes inside provisioned (ignored) paths since they were provisioned')
    .argument('<id>')
    .option('--files', 'list every changed file inside provisioned paths, not one line per package')
    .action((rawId: string, opts: { files?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project();
        const data = await statusView(ctx, rawId);
        const { envRewritten, services, conflicts } = data;
        const human = [
          formatStatus(rawId, data, { files: opts.files === true }),
          ...envRewritten.map(
            (r) => `${r.file}: ${r.keys.join(', ')} set to this task's services (they named the main checkout's)`,
          ),
          ...(services.length > 0 ? ['services:', ...services.map((s) => `  ${serviceLine(s)}`)] : []),
          ...(conflicts.length > 0 ? [`conflicts with ${conflictLine({ id: rawId, with: conflicts })}`] : []),
        ].join('\n');
        return { data, human, colour: paintStatus };
      }),
    );
};
