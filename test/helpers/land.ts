import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gitIn, refsAndWorktrees, type TestRepo } from './repo.js';

/** Helpers for the landing tests: a task with a workspace, and a full before/after snapshot. */

export async function newTask(repo: TestRepo, id: string, type = 'feat'): Promise<string> {
  const r = await repo.warrenJson<{ path: string; state: string }>('new', type, id, '--no-sync');
  if (r.code !== 0) throw new Error(`warren new ${id} failed: ${r.stdout} ${r.stderr}`);
  return r.json.path;
}

export function writeIn(dir: string, rel: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
}

/** Every file under `dir` (outside .git) with a hash of its content or link target. */
function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, entry.name);
      if (entry.name === '.git') continue;
      if (entry.isDirectory()) walk(r);
      else if (entry.isSymbolicLink()) out.push(`${r} -> ${fs.readlinkSync(path.join(dir, r))}`);
      else
        out.push(
          `${r} ${createHash('sha1')
            .update(fs.readFileSync(path.join(dir, r)))
            .digest('hex')}`,
        );
    }
  };
  walk('');
  return out.sort();
}

/** Refs, worktrees, and for each checkout: its index, its status and every file. A refusal must leave all equal. */
export function snapshot(repo: TestRepo, ...checkouts: string[]): string {
  const parts = [refsAndWorktrees(repo.root)];
  for (const dir of [repo.root, ...checkouts]) {
    parts.push(`== ${dir}`, gitIn(dir, 'ls-files', '-s'), gitIn(dir, 'status', '--porcelain'), ...files(dir));
  }
  return parts.join('\n');
}
