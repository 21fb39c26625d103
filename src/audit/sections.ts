import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * `warren audit ID` is assembled from sections, each owned by the feature that knows the facts
 * (git sharing and hooks, provisioned paths, ports, compose mounts). A section returns data
 * for --json and lines for people.
 */
export interface AuditSection {
  name: string;
  /** Lower runs first in the report. */
  order: number;
  collect(ctx: ProjectContext, task: Task): Promise<{ data: unknown; lines: string[] }>;
}

const sections: AuditSection[] = [];

export function addAuditSection(section: AuditSection): void {
  sections.push(section);
  sections.sort((a, b) => a.order - b.order);
}

export function auditSections(): readonly AuditSection[] {
  return sections;
}
