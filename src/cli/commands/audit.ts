import { auditTask } from '../../audit/run.js';
import type { Register } from '../command.js';

export const registerAudit: Register = (program, run) => {
  program
    .command('audit')
    .description('what this workspace shares with others and what changed under it')
    .argument('<id>')
    .action((id: string) =>
      run(async (env) => {
        const ctx = await env.project();
        const report = await auditTask(ctx, id);
        return {
          data: { id: report.id, path: report.path, sections: report.sections },
          human: report.lines.join('\n'),
        };
      }),
    );
};
