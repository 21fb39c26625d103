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

/** Copies the user's login and settings into the task's folder where they are newer; returns what it copied. */
export function seedAgentHome(agent: ResumableAgent, home: string, env: NodeJS.ProcessEnv): string[] {
  const seed = SEEDS[agent];
  const from = seed.from(env);
  const into = path.join(home, seed.into);
  fs.mkdirSync(into, { recursive: true, mode: 0o700 });
  const copied: string[] = [];
  for (const name of seed.files) {
    const src = path.join(from, name);
    const dest = path.join(into, name);
    const srcStat = statFile(src);
    if (!srcStat) continue;
    const destStat = statFile(dest);
    if (destStat && destStat.mtimeMs >= srcStat.mtimeMs) continue;
    fs.copyFileSync(src, dest);
    fs.chmodSync(dest, 0o600);
    copied.push(name);
  }
  if (agent === 'gemini' && env.GEMINI_API_KEY && !statFile(path.join(into, 'settings.json'))) {
    fs.writeFileSync(path.join(into, 'settings.json'), `${JSON.stringify(GEMINI_API_KEY_SETTINGS, null, 2)}\n`, {
      mode: 0o600,
    });
    copied.push('settings.json (auth: gemini-api-key)');
  }
  return copied;
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
