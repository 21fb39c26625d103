import type { ProjectContext } from '../workspace/context.js';
import { requireTask } from '../workspace/tasks.js';
import { assertContained } from '../workspace/paths.js';

export interface AuditReport {
  id: string;
  path: string;
  sections: { name: string; data: unknown }[];
  lines: string[];
}

/** `warren audit ID`: every section of the lifecycle, in order. Read-only. */
export async function auditTask(ctx: ProjectContext, rawId: string): Promise<AuditReport> {
  const task = requireTask(ctx, rawId);
  const id = task.id;
  assertContained(ctx.root, task.path);
  const sections: AuditReport['sections'] = [];
  const lines = [`audit of task ${id} (${task.branch}) at ${task.path}`];
  for (const section of ctx.lifecycle.audit) {
    const { data, lines: sectionLines } = await section.collect(ctx, task);
    sections.push({ name: section.name, data });
    lines.push('', `[${section.name}]`, ...sectionLines.map((l) => `  ${l}`));
  }
  return { id, path: task.path, sections, lines };
}
