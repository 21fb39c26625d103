import { provisionView } from '../../views/provision.js';
import type { Register } from '../command.js';

export const registerProvision: Register = (program, run) => {
  program
    .command('provision')
    .description(
      'mount again what is not mounted; with --refresh, provision the ignored paths again from the main checkout',
    )
    .argument('<id>')
    .option('--refresh', 'drop the provisioned paths (and their private changes) and provision them again')
    .action((rawId: string, opts: { refresh?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project();
        const result = await provisionView(ctx, rawId, { refresh: opts.refresh === true });
        // A task on a host: its paths there, provisioned by the host's warren.
        const host = result.host === undefined ? {} : { host: result.host };
        const where = result.host === undefined ? '' : `on host ${result.host}: `;
        if (result.refreshed) {
          const human = [
            ...result.records.map((r) => `${r.path}: ${r.mode} by ${r.method}, ${r.entries} entries, ${r.ms} ms`),
            ...result.skips.map((s) => `skipped ${s.path} (${s.reason}): ${s.detail}`),
          ].join('\n');
          return {
            data: { provision: result.records, skips: result.skips, ...host },
            human: `${where}${human || 'nothing to provision'}`,
          };
        }
        const replaced = result.replaced.map(
          (r) => `${r}; not mounted over it (\`warren status ${rawId}\` says what it holds)`,
        );
        const placed =
          result.remounted.length > 0
            ? `mounted again: ${result.remounted.join(', ')}`
            : replaced.length > 0
              ? ''
              : `${result.provision.length} provisioned path(s), all in place`;
        return {
          data: { provision: result.provision, remounted: result.remounted, replaced: result.replaced, ...host },
          human: `${where}${[placed, ...replaced].filter(Boolean).join('\n')}`,
        };
      }),
    );
};
