import fs from 'node:fs';
import path from 'node:path';
import { listFiles } from '../git/status.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { isInside } from '../workspace/paths.js';
import type { ComposeBind } from './compose.js';
import type { AuditSection } from '../workspace/types.js';

export interface ComposeFinding extends ComposeBind {
  /** The compose file, absolute. */
  file: string;
  /** The source is the main checkout (or inside it), not this workspace. */
  mainCheckout: boolean;
}

/** Compose files of a checkout: tracked and untracked-but-not-ignored, by name. */
async function composeFiles(dir: string): Promise<string[]> {
  const { COMPOSE_FILE } = await import('./compose.js');
  return (await listFiles(dir))
    .filter((rel) => COMPOSE_FILE.test(path.basename(rel)))
    .map((rel) => path.join(dir, rel));
}

/**
 * Every bind mount in the compose files of the main checkout and of the workspace whose source
 * is the main checkout: containers started from those run the main checkout's code, not the
 * workspace's.
 */
export async function composeFindings(ctx: ProjectContext, task: Task): Promise<ComposeFinding[]> {
  // Loaded on use: its YAML parser stays out of every other command's start-up.
  const { composeBinds } = await import('./compose.js');
  const findings: ComposeFinding[] = [];
  for (const file of [...(await composeFiles(ctx.repo.root)), ...(await composeFiles(task.path))]) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const bind of composeBinds(text, path.dirname(file))) {
      const mainCheckout =
        bind.resolved !== null && isInside(ctx.repo.root, bind.resolved) && !isInside(task.path, bind.resolved);
      findings.push({ ...bind, file, mainCheckout });
    }
  }
  return findings;
}

export const composeSection: AuditSection = {
  name: 'compose',
  async collect(ctx: ProjectContext, task: Task) {
    const findings = await composeFindings(ctx, task);
    const risky = findings.filter((f) => f.mainCheckout);
    const lines =
      findings.length === 0
        ? ['no bind mounts in docker-compose.yml / compose.yaml files']
        : findings.map((f) => {
            const where = `${path.relative(ctx.repo.root, f.file).startsWith('..') ? f.file : path.relative(ctx.repo.root, f.file)} service ${f.service}: ${f.source}:${f.target}`;
            if (f.mainCheckout)
              return `WARNING ${where} binds the main checkout (${f.resolved}); containers from it run the main checkout's code, not this workspace's`;
            return `ok      ${where} (${f.resolved ?? 'unresolved variable'})`;
          });
    return { data: { binds: findings, mainCheckoutBinds: risky.length }, lines };
  },
};
