import { scanArchives } from '../../workspace/archive.js';
import { listTasks } from '../../workspace/tasks.js';
import { conflictLine, conflictsOf, lastMap } from '../../conflicts/view.js';
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
        const tasks = listTasks(ctx);
        // The conflict map as last computed (`warren conflicts`, `status`): no git call here.
        const pairs = lastMap(ctx);
        const conflicts = new Map(tasks.map((t) => [t.id, conflictsOf(pairs, t.id)]));
        const data = tasks.map((t) => ({
          id: t.id,
          type: t.type,
          branch: t.branch,
          path: t.path,
          base: t.base,
          state: t.state,
          createdAt: t.createdAt,
          conflicts: conflicts.get(t.id)?.with ?? [],
        }));
        const human =
          tasks.length === 0
            ? 'no tasks; create one with `warren new feat ID`'
            : table(
                ['ID', 'TYPE', 'STATE', 'AGE', 'BRANCH', 'PATH'],
                tasks.map((t) => [t.id, t.type, t.state, age(t.createdAt), t.branch, t.path]),
              ) + conflictLines([...conflicts.values()]);
        return { data, human };
      }),
    );
};

/** Below the table: one line per task that conflicts, as the map was last computed. */
function conflictLines(all: readonly ReturnType<typeof conflictsOf>[]): string {
  const lines = all.filter((c) => c.with.length > 0).map((c) => `${c.id} conflicts with ${conflictLine(c)}`);
  return lines.length > 0 ? `\n\n${lines.join('\n')}\n(as last computed; \`warren conflicts\` looks again)` : '';
}
