import fs from 'node:fs';
import path from 'node:path';
import { withRepoLock } from '../workspace/locks.js';
import { taskEnv } from '../run/task-env.js';
import { serviceEnv } from './task-services.js';
import type { Task } from '../state/types.js';
import { writeFileAtomic } from '../util/atomic.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * What processes warren does not start get: the editor's terminal, a shell in the workspace, a
 * test runner started by hand. warren writes the task's variables (its ports, its services'
 * URLs) into `.env.warren` at the workspace root, mode 0600, kept out of git through the
 * repository's info/exclude; `warren env ID` prints the same as `export` lines for `eval`.
 */

export const ENV_FILE = '.env.warren';

/** `KEY=VALUE` lines; values that are not plain are double-quoted, as dotenv readers take them. Pure. */
export function dotenv(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${/^[A-Za-z0-9_@%+=:,./-]*$/.test(v) ? v : JSON.stringify(v)}`)
    .join('\n');
}

/** `export KEY='VALUE'` lines for a POSIX shell's eval. Pure. */
export function shellExports(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, "'\\''")}'`)
    .join('\n');
}

/** The variables a task's own commands see, less what warren itself needs only inside them. */
export function taskVariables(ctx: ProjectContext, task: Task): Record<string, string> {
  return taskEnv(ctx, task);
}

/**
 * Writes `.env.warren` (at `new`, and again whenever what it holds changed: warren's PostgreSQL
 * server moved to another port). Returns the file, or null when it held this already.
 */
export async function writeEnvFile(ctx: ProjectContext, task: Task): Promise<string | null> {
  const file = path.join(task.path, ENV_FILE);
  const env = taskVariables(ctx, task);
  const text = `# written by warren for task ${task.id}: its ports and services (\`warren env ${task.id}\` prints the same)\n${dotenv(env)}\n`;
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st?.isFile() && fs.readFileSync(file, 'utf8') === text) return null;
  // Never through a link the task's agent left there.
  if (st && !st.isFile()) fs.rmSync(file, { force: true });
  writeFileAtomic(file, text, { mode: 0o600 });
  await keepOutOfGit(ctx);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'service.env_written',
    message: `wrote ${Object.keys(env).length} variable(s) to ${file} (kept out of git)`,
    data: { file, keys: Object.keys(env) },
  });
  return file;
}

const BLOCK = [
  "# >>> warren: each task's variables (.env.warren, written by warren)",
  `/${ENV_FILE}`,
  '# <<< warren: .env.warren',
];

/**
 * One anchored line in the repository's info/exclude (every worktree reads the common one), in
 * a block of its own that provisioning's block leaves alone; never the user's .gitignore.
 */
async function keepOutOfGit(ctx: ProjectContext): Promise<void> {
  const file = path.join(ctx.repo.commonDir, 'info', 'exclude');
  const has = (): boolean =>
    fs.existsSync(file) &&
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .includes(BLOCK[0] ?? '');
  if (has()) return;
  await withRepoLock(ctx, 'info/exclude', async () => {
    if (has()) return;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    writeFileAtomic(file, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${BLOCK.join('\n')}\n`);
  });
}

/** The env files a project copies into its workspaces that warren reads for keys naming the main checkout's services. */
export const DOTENV_FILES = [
  '.env',
  '.env.local',
  '.env.development',
  '.env.development.local',
  '.env.test',
  '.env.test.local',
];

/**
 * Pure: `text` with the value of each of `values`' keys replaced (`KEY=…`, `export KEY=…`), and
 * the keys that were. Comments, order and every other line stay as they are.
 */
export function rewriteDotenv(text: string, values: Record<string, string>): { text: string; keys: string[] } {
  const keys: string[] = [];
  const lines = text.split('\n').map((line) => {
    const m = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)(.*)$/.exec(line);
    const key = m?.[2];
    if (!m || key === undefined || !(key in values)) return line;
    const value = values[key] ?? '';
    const current = (m[4] ?? '').trim().replace(/^(['"])(.*)\1$/, '$2');
    if (current === value) return line;
    keys.push(key);
    return `${m[1]}${key}${m[3]}${/^[A-Za-z0-9_@%+=:,./-]*$/.test(value) ? value : JSON.stringify(value)}`;
  });
  return { text: lines.join('\n'), keys: [...new Set(keys)] };
}

/**
 * A copied `.env` (or .env.local…) whose keys are the task's service variables (DATABASE_URL,
 * REDIS_URL, …) names the main checkout's services: each such key is set to the task's own,
 * in the task's copy only (a file that is a link into the main checkout is left alone, and
 * said). Returns what was rewritten, for `status` and the event.
 */
export function rewriteCopiedEnv(ctx: ProjectContext, task: Task): { file: string; keys: string[] }[] {
  const values = serviceEnv(ctx, task);
  if (Object.keys(values).length === 0) return [];
  const done: { file: string; keys: string[] }[] = [];
  for (const name of DOTENV_FILES) {
    const file = path.join(task.path, name);
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    const { text, keys } = rewriteDotenv(fs.readFileSync(file, 'utf8'), values);
    if (keys.length === 0) continue;
    writeFileAtomic(file, text);
    fs.chmodSync(file, st.mode & 0o777);
    done.push({ file: name, keys });
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'service.env_rewritten',
      level: 'warn',
      message: `${name} named the main checkout's services: set ${keys.join(', ')} to this task's own`,
      data: { file: name, keys },
    });
  }
  return done;
}
