import { createHash } from 'node:crypto';

/**
 * Names warren gives what it makes for a task's services, derived from the project and task ID
 * (and service name) and validated by construction: lowercase [a-z0-9_], at most 63 characters
 * (PostgreSQL's limit), a readable part plus a hash (two projects may both have a task `api`).
 * Pure.
 */

function slug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, max)
    .replace(/_+$/, '');
}

function hash(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex');
}

/** A task's database, and its role (the same name: warren's pg_hba.conf lets a role reach only its namesake). */
export function taskDbName(projectKey: string, taskId: string, service: string): string {
  const s = slug(taskId, 24);
  return `warren_${s}${s ? '_' : ''}${slug(service, 16)}_${hash(projectKey, taskId, service).slice(0, 10)}`;
}

/** The template built from one seed content for one project's service. */
export function templateName(projectKey: string, seedKey: string): string {
  return `warren_tpl_${hash(projectKey, seedKey).slice(0, 20)}`;
}
