import type { AuditSection } from '../workspace/types.js';
import { whereItRuns, whereLines } from './where-it-runs.js';

/** `warren audit ID`, section "runner": where the task's processes run and what holds them, for every runner. */
export const runnerAudit: AuditSection = {
  name: 'runner',
  collect(ctx, task) {
    const where = whereItRuns(ctx, task);
    return Promise.resolve({ data: where, lines: whereLines(where) });
  },
};
