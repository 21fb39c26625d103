import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { assertContained } from '../workspace/paths.js';
import { auditSections } from './sections.js';

export interface AuditReport {
  id: string;
  path: string;
  sections: { name: string; data: unknown }[];
  lines: string[];
}

/** `warren audit ID`: every registered section, in order. Read-only. */
export async function auditTask(ctx: ProjectContext, rawId: string): Promise<AuditReport> {
  const id = validateTaskId(rawId);
  const task = ctx.store.getTask(ctx.key, id);
  if (!task) throw new WarrenError('TASK_NOT_FOUND', `no task ${id} in this repository; nothing was changed.`, { hint: 'See `warren list`.' });
  assertContained(ctx.root, task.path);
  const sections: AuditReport['sections'] = [];
  const lines = [`audit of task ${id} (${task.branch}) at ${task.path}`];
  for (const section of auditSections()) {
    const { data, lines: sectionLines } = await section.collect(ctx, task);
    sections.push({ name: section.name, data });
    lines.push('', `[${section.name}]`, ...sectionLines.map((l) => `  ${l}`));
  }
  return { id, path: task.path, sections, lines };
}
