import { gc } from '../../workspace/gc.js';
import type { Register } from '../command.js';

export const registerGc: Register = (program, run) => {
  program
    .command('gc')
    .description('remove the strays that are provably safe to remove; list what was kept and why')
    .option(
      '--hosts',
      "also ask every host in config.yaml for this repository's workspaces no task or record here knows (after this machine's WARREN_HOME was lost)",
    )
    .action((opts: { hosts?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project({ lenientConfig: true });
        const result = await gc(ctx, { hosts: opts.hosts === true });
        const lines = [
          ...result.removed.map((r) => `removed  ${r.kind}  ${r.path ?? r.branch ?? ''}${r.id ? ` (${r.id})` : ''}`),
          ...result.kept.map((k) => `kept     ${k.kind}  ${k.path}: ${k.reason}`),
        ];
        return { data: result, human: lines.length === 0 ? 'nothing to collect' : lines.join('\n') };
      }),
    );
};
