import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic.js';
import { ID_PATTERN } from '../workspace/ids.js';

/**
 * Claude Code's worktree hooks. `claude --worktree NAME` (and subagents with worktree
 * isolation) run the `WorktreeCreate` hook instead of `git worktree add`: a JSON payload on
 * stdin, the worktree's absolute path expected on stdout. `WorktreeRemove` gets the path back
 * when the session's worktree goes. warren answers both with its own workspaces, so those
 * sessions get provisioning, ports, setup and the same guards as `warren new` / `warren rm`.
 *
 * The payload has changed shape across Claude Code versions; every shape seen is accepted:
 * the name as `name` (2.1.x), `worktree_name` or `branch_name`, or only a proposed
 * `worktree_path` (its last segment); the base as `base_ref` or `base_commit`; the project as
 * `cwd`.
 */

export interface CreatePayload {
  /** The task ID warren uses (the name, made a valid ID). */
  id: string;
  /** The name as Claude Code sent it. */
  name: string;
  base: string | null;
  /** The project folder the session runs in, when the payload says. */
  cwd: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

function parsePayload(text: string, hook: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = null;
  }
  if (!isObject(raw)) {
    throw new WarrenError(
      'USAGE',
      `the ${hook} hook expects Claude Code's JSON payload on stdin and got ${text.trim() === '' ? 'nothing' : 'something else'}; nothing was done.`,
      {
        hint: 'Claude Code runs this hook itself; see `warren hooks install claude`.',
      },
    );
  }
  return raw;
}

/** Pure: a worktree name → a valid task ID (`feature/auth` → `feature-auth`), or null when nothing usable is left. */
export function taskIdForName(name: string): string | null {
  const id = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64)
    .replace(/\.lock$/, '')
    .replace(/[-.]+$/, '');
  return ID_PATTERN.test(id) ? id : null;
}

/** Pure: the WorktreeCreate payload, in any of the shapes Claude Code has sent. */
export function parseCreatePayload(text: string): CreatePayload {
  const p = parsePayload(text, 'WorktreeCreate');
  const proposed = str(p.worktree_path);
  const name = str(p.name) ?? str(p.worktree_name) ?? str(p.branch_name) ?? (proposed ? path.basename(proposed) : null);
  if (name === null) {
    throw new WarrenError(
      'USAGE',
      'the WorktreeCreate payload names no worktree (name, worktree_name, branch_name or worktree_path); nothing was created.',
      {
        hint: 'Run `claude --worktree NAME`.',
      },
    );
  }
  const id = taskIdForName(name);
  if (id === null) {
    throw new WarrenError(
      'ID_INVALID',
      `the worktree name ${JSON.stringify(name)} leaves no usable task ID; nothing was created.`,
      { hint: 'Name the worktree with letters and digits, e.g. `claude --worktree fix-login`.' },
    );
  }
  return { id, name, base: str(p.base_ref) ?? str(p.base_commit), cwd: str(p.cwd) };
}

/** Pure: the WorktreeRemove payload's path (and project folder). */
export function parseRemovePayload(text: string): { worktreePath: string; cwd: string | null } {
  const p = parsePayload(text, 'WorktreeRemove');
  const worktreePath = str(p.worktree_path) ?? str(p.path);
  if (worktreePath === null) {
    throw new WarrenError('USAGE', 'the WorktreeRemove payload names no worktree_path; nothing was removed.', {
      hint: 'Claude Code sends it; run the hook from Claude Code.',
    });
  }
  return { worktreePath, cwd: str(p.cwd) };
}

/** Claude Code's settings for one checkout, beside the checked-in `.claude/settings.json`. */
export const CLAUDE_LOCAL_SETTINGS = '.claude/settings.local.json';

export interface HooksInstallResult {
  file: string;
  /** The hook entries warren added (empty when they were there already). */
  added: ('WorktreeCreate' | 'WorktreeRemove')[];
  /** warren's part of the file, as written. */
  hooks: Record<'WorktreeCreate' | 'WorktreeRemove', unknown>;
}

interface HookEntry {
  hooks?: { type?: string; command?: string }[];
}

/**
 * Merges warren's two hooks into `<repo>/.claude/settings.local.json` (Claude Code's
 * per-checkout settings, not checked in), keeping every other key and hook. Refuses, changing
 * nothing, when the file is not JSON or another command already answers WorktreeCreate (two
 * would both make a worktree).
 */
export function installClaudeHooks(repoRoot: string, commands: { create: string; remove: string }): HooksInstallResult {
  const file = path.join(repoRoot, CLAUDE_LOCAL_SETTINGS);
  let settings: Record<string, unknown> = {};
  if (fs.existsSync(file)) {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new WarrenError(
        'CONFIG_INVALID',
        `${file} is not valid JSON (${(err as Error).message}); nothing was changed.`,
        { hint: 'Fix the file, then run `warren hooks install claude` again.' },
      );
    }
    if (!isObject(raw))
      throw new WarrenError('CONFIG_INVALID', `${file} does not hold a JSON object; nothing was changed.`, {
        hint: 'Fix the file, then run `warren hooks install claude` again.',
      });
    settings = raw;
  }
  const hooks = isObject(settings.hooks) ? { ...settings.hooks } : {};
  if (settings.hooks !== undefined && !isObject(settings.hooks)) {
    throw new WarrenError('CONFIG_INVALID', `${file}: "hooks" is not an object; nothing was changed.`, {
      hint: 'Fix the file, then run `warren hooks install claude` again.',
    });
  }
  const added: HooksInstallResult['added'] = [];
  for (const [event, command] of [
    ['WorktreeCreate', commands.create],
    ['WorktreeRemove', commands.remove],
  ] as const) {
    const entries = Array.isArray(hooks[event]) ? (hooks[event] as HookEntry[]) : [];
    const commandsThere = entries.flatMap((e) => (Array.isArray(e?.hooks) ? e.hooks.map((h) => h?.command) : []));
    if (commandsThere.includes(command)) continue;
    const others = commandsThere.filter((c): c is string => typeof c === 'string');
    if (event === 'WorktreeCreate' && others.length > 0) {
      throw new WarrenError(
        'CONFIG_INVALID',
        `${file} already has a WorktreeCreate hook (${others.join('; ')}); two would each make a worktree, so nothing was changed.`,
        {
          hint: `Remove that hook from ${file} if warren should make Claude Code's worktrees, then run \`warren hooks install claude\` again.`,
        },
      );
    }
    hooks[event] = [...entries, { hooks: [{ type: 'command', command }] }];
    added.push(event);
  }
  if (added.length > 0) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeFileAtomic(file, `${JSON.stringify({ ...settings, hooks }, null, 2)}\n`);
  }
  return { file, added, hooks: { WorktreeCreate: hooks.WorktreeCreate, WorktreeRemove: hooks.WorktreeRemove } };
}

/** Claude Code runs hook commands through a shell: one argv as a POSIX shell command line. */
export { shellCommand } from '../util/shell.js';
