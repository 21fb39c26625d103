import { conflictsReport, type ConflictsReport } from '../../conflicts/operations.js';
import { BASE_SIDE, type PairResult } from '../../conflicts/types.js';
import type { Register } from '../command.js';
import { table } from '../format.js';

export const registerConflicts: Register = (program, run) => {
  program
    .command('conflicts')
    .description(
      "which live tasks' work would not merge with another's or with their base, as git merges it (uncommitted work included), and in which files",
    )
    .argument('[id]', 'only the pairs of this task, with their conflicting hunks')
    .action((rawId: string | undefined) =>
      run(async (env) => {
        if (rawId !== undefined) env.taskId = rawId;
        const ctx = await env.project({ lenientConfig: true });
        const report = await conflictsReport(ctx, rawId);
        return { data: report, human: formatReport(report, rawId !== undefined) };
      }),
    );
};

const side = (id: string): string => (id === BASE_SIDE ? 'its base' : id);

function formatReport(r: ConflictsReport, hunks: boolean): string {
  const rows = [
    ...r.conflicts.map((p) => [p.a, side(p.b), 'conflict', p.files.map((f) => f.path).join(', ')]),
    ...r.overlaps.map((o) => [o.a, side(o.b), 'merges', o.paths.join(', ')]),
  ];
  const summary = `${r.pairs} pair(s) (every two live tasks, and each with its base): ${r.merged} merged again, ${r.reused} unchanged since the last look; ${r.snapshots} workspace(s) read, in ${r.ms} ms`;
  const body =
    rows.length === 0
      ? 'no two live tasks change the same files, and every task merges with its base'
      : table(['TASK', 'WITH', 'MERGE', 'FILES'], rows);
  const detail = hunks ? r.conflicts.flatMap(hunkLines) : [];
  return [body, ...detail, summary].join('\n');
}

/** A pair's conflicting hunks, each side's lines under its name. */
function hunkLines(p: PairResult): string[] {
  return p.files.flatMap((f) => [
    '',
    `${f.path} (${f.type}) — ${p.a} against ${side(p.b)}`,
    ...(f.hunks.length === 0 ? [`  ${f.message || 'no hunk: the conflict is about the file itself'}`] : []),
    ...f.hunks.flatMap((h) => [
      `  @ line ${h.line}`,
      `  ${p.a}:`,
      ...h.ours.map((l) => `    ${l}`),
      `  ${side(p.b)}:`,
      ...h.theirs.map((l) => `    ${l}`),
    ]),
  ]);
}
