import { scanArchives } from '../../workspace/archive.js';
import { conflictLine } from '../../conflicts/view.js';
import { listView, type ListView } from '../../views/tasks.js';
import type { Register } from '../command.js';
import { age, table } from '../format.js';

export const registerList: Register = (program, run) => {
  program
    .command('list')
    .description('every task of this repository')
    .option('--archived', 'the archives `rm --discard` saved instead (newest last), which `restore` brings back')
    .action((opts: { archived?: boolean }) =>
      run(async (env) => {
        const ctx = await env.project({ lenientConfig: true });
        if (opts.archived) {
          const { archives, ignored } = await scanArchives(ctx);
          for (const i of ignored) env.log(`warren: warn: not listed: ${i.ref}: ${i.reason}`);
          const human =
            archives.length === 0
              ? 'no archives; `warren rm ID --discard` makes one'
              : table(
                  ['ID', 'TYPE', 'ARCHIVED', 'BRANCH', 'TIP', 'REF'],
                  archives.map((a) => [a.id, a.type, `${age(a.at)} ago`, a.branch, a.tip.slice(0, 12), a.ref]),
                );
          return { data: archives, human };
        }
        const data = listView(ctx);
        const human =
          data.length === 0
            ? 'no tasks; create one with `warren new feat ID`'
            : table(
                ['ID', 'TYPE', 'STATE', 'AGE', 'BRANCH', 'PATH'],
                data.map((t) => [t.id, t.type, t.state, age(t.createdAt), t.branch, t.path]),
              ) + conflictLines(data);
        return { data, human };
      }),
    );
};

/** Below the table: one line per task that conflicts, as the map was last computed. */
function conflictLines(all: ListView): string {
  const lines = all
    .filter((t) => t.conflicts.length > 0)
    .map((t) => `${t.id} conflicts with ${conflictLine({ id: t.id, with: t.conflicts })}`);
  return lines.length > 0 ? `\n\n${lines.join('\n')}\n(as last computed; \`warren conflicts\` looks again)` : '';
}
