import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Store } from '../state/store.js';
import { listDir } from '../util/list-dir.js';
import { logDir } from './records.js';
import type { ResumableAgent } from './agents.js';

/**
 * Each agent's state folder for one task: `$WARREN_HOME/logs/<project>/<ID>/agents/<agent>/`,
 * handed to the CLI as CLAUDE_CONFIG_DIR, CODEX_HOME or GEMINI_CLI_HOME. What the CLIs write
 * outside the workspace — sessions, history, caches, their config — lands here instead of in
 * the user's HOME, so that:
 * - two agents running at once do not write one `~/.claude.json` (or codex's SQLite files);
 * - a sandboxed run can write its state (the user's HOME is read-only in the sandbox);
 * - the task's sessions are the task's own, and `warren run --resume` finds them;
 * - they go with the task's logs (kept after `rm`, deleted by `gc` a week later).
 * The user's login and settings are copied in (seeded) when newer than the task's copy, so a
 * logged-in CLI stays logged in; API keys in the environment pass through as they are.
 */
export function agentHome(store: Store, project: string, taskId: string, agent: string): string {
  const dir = path.join(logDir(store, project, taskId), 'agents', agent);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

interface Seed {
  /** The user's own folder for this CLI. */
  from(env: NodeJS.ProcessEnv): string;
  /** Where, inside the task's folder, the same files go. */
  into: string;
  files: readonly string[];
}

/** The login and settings files of each CLI, as they lay them out (measured on the real CLIs). */
export const SEEDS: Record<ResumableAgent, Seed> = {
  claude: {
    from: (env) => env.CLAUDE_CONFIG_DIR || path.join(homeOf(env), '.claude'),
    into: '',
    files: ['.credentials.json', 'settings.json'],
  },
  codex: {
    from: (env) => env.CODEX_HOME || path.join(homeOf(env), '.codex'),
    into: '',
    files: ['auth.json', 'config.toml'],
  },
  gemini: {
    from: (env) => path.join(env.GEMINI_CLI_HOME || homeOf(env), '.gemini'),
    into: '.gemini',
    files: ['settings.json', 'oauth_creds.json', 'google_accounts.json'],
  },
};

function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME || os.homedir();
}

/** Gemini runs unattended only with an auth type chosen in its settings; an API key in the environment chooses this one. */
const GEMINI_API_KEY_SETTINGS = { security: { auth: { selectedType: 'gemini-api-key' } } };

/** What seeding wrote, and the links the agent had left where warren writes (each replaced by a real file or folder). */
export interface Seeded {
  copied: string[];
  replacedLinks: { path: string; target: string }[];
}

/**
 * Copies the user's login and settings into the task's folder where they are newer. The folder
 * is the agent's to write, so nothing in it is followed: a file is written beside its name and
 * renamed over it (a symlink there is replaced, never written through), and a folder warren
 * writes into that is a symlink is replaced by a real one.
 */
export function seedAgentHome(agent: ResumableAgent, home: string, env: NodeJS.ProcessEnv): Seeded {
  const seed = SEEDS[agent];
  const from = seed.from(env);
  const seeded: Seeded = { copied: [], replacedLinks: [] };
  realFolder(home, seeded);
  const into = path.join(home, seed.into);
  if (seed.into !== '') realFolder(into, seeded);
  for (const name of seed.files) {
    const srcStat = statFile(path.join(from, name));
    if (!srcStat) continue;
    const dest = path.join(into, name);
    const destStat = fs.lstatSync(dest, { throwIfNoEntry: false });
    if (destStat?.isFile() && destStat.mtimeMs >= srcStat.mtimeMs) continue;
    if (destStat?.isDirectory()) continue; // not warren's to replace: the CLI finds no file there, as it would have
    writeBeside(dest, fs.readFileSync(path.join(from, name)), seeded);
    seeded.copied.push(name);
  }
  const geminiSettings = path.join(into, 'settings.json');
  if (agent === 'gemini' && env.GEMINI_API_KEY && !fs.lstatSync(geminiSettings, { throwIfNoEntry: false })?.isFile()) {
    writeBeside(geminiSettings, `${JSON.stringify(GEMINI_API_KEY_SETTINGS, null, 2)}\n`, seeded);
    seeded.copied.push('settings.json (auth: gemini-api-key)');
  }
  return seeded;
}

/** Makes `dir` a real folder of the task: a symlink there (the agent's) is removed first, not followed. */
function realFolder(dir: string, seeded: Seeded): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) {
    seeded.replacedLinks.push({ path: dir, target: fs.readlinkSync(dir) });
    fs.unlinkSync(dir);
  } else if (st && !st.isDirectory()) {
    throw new Error(`${dir} is not a folder`);
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Writes `data` to a new 0600 file beside `dest` (O_EXCL: never through a link) and renames it over `dest`. */
function writeBeside(dest: string, data: string | Buffer, seeded: Seeded): void {
  const st = fs.lstatSync(dest, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) seeded.replacedLinks.push({ path: dest, target: fs.readlinkSync(dest) });
  const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.warren-${randomUUID()}`);
  try {
    fs.writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function statFile(file: string): fs.Stats | null {
  try {
    const st = fs.statSync(file);
    return st.isFile() ? st : null;
  } catch {
    return null;
  }
}

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/**
 * The session a codex run wrote: its newest `sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl`
 * changed since `sinceMs`. (claude and gemini are given their session id up front.)
 */
export function codexSessionSince(home: string, sinceMs: number): string | null {
  let best: { id: string; mtime: number } | null = null;
  const walk = (dir: string, depth: number): void => {
    for (const name of listDir(dir)) {
      const p = path.join(dir, name);
      const st = fs.lstatSync(p);
      if (st.isDirectory() && depth < 3) walk(p, depth + 1);
      const m = st.isFile() && name.startsWith('rollout-') ? UUID.exec(name) : null;
      if (m?.[1] && st.mtimeMs >= sinceMs && (!best || st.mtimeMs > best.mtime)) best = { id: m[1], mtime: st.mtimeMs };
    }
  };
  walk(path.join(home, 'sessions'), 0);
  return (best as { id: string } | null)?.id ?? null;
}
