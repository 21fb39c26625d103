import fs from 'node:fs';
import path from 'node:path';
import { findCommand } from './command-lookup.js';

/**
 * The root package's lifecycle scripts run directly, as npm and pnpm run them, instead of by
 * `npm run` / `pnpm run` (issue 41): starting pnpm took about 1 s of CPU a script, most of a
 * ready task's time in a pnpm workspace, to run a `node scripts/x.js` of 50 ms. Each script runs
 * as the manager runs it: `sh -c SCRIPT` in the package's folder (the workspace root), PATH
 * starting with its `node_modules/.bin`, and the variables scripts read — npm_lifecycle_event,
 * npm_lifecycle_script, npm_package_* (pnpm: the whole package.json flattened, as its
 * npm-lifecycle's makeEnv does; npm: name, version, config, engines, bin, as @npmcli/run-script
 * does), npm_package_json, INIT_CWD, NODE, npm_node_execpath and npm_config_user_agent (which
 * `only-allow pnpm` checks). pnpm drops every inherited npm_* variable first; npm overrides.
 * Not set: the manager's own configuration as npm_config_* (registry, cafile…), npm_execpath,
 * npm_command, and npm's ancestors' node_modules/.bin beyond the workspace root.
 *
 * The command is one shell script, built here and run through the task's runner like any setup
 * step, so it runs where `pnpm run` ran (sandbox, container, cluster, remote host), with paths
 * read there (`$PWD`).
 */

export type DirectManager = 'npm' | 'pnpm';

/** `'it'\''s'`: one shell word. Pure. */
export function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** pnpm's npm_package_*: every field but `_…` and readme, objects and arrays flattened by key (npm-lifecycle makeEnv). Pure. */
function flattenAll(data: unknown, prefix: string, env: Record<string, string>): void {
  if (typeof data !== 'object' || data === null) return;
  for (const [key, value] of Object.entries(data)) {
    if (key.startsWith('_') || key === 'readme') continue;
    const name = `${prefix}${key}`.replace(/[^a-zA-Z0-9_]/g, '_');
    if (value && typeof value === 'object') flattenAll(value, `${name}_`, env);
    else {
      const text = String(value);
      env[name] = text.includes('\n') ? JSON.stringify(text) : text;
    }
  }
}

/** npm's npm_package_*: name, version, config, engines, bin (npm RFC 183; @npmcli/run-script package-envs). Pure. */
function flattenNpm(vals: Record<string, unknown>, prefix: string, env: Record<string, string>): void {
  for (const [key, val] of Object.entries(vals)) {
    if (val === undefined) continue;
    else if (val === null || val === false) env[`${prefix}${key}`] = '';
    else if (Array.isArray(val)) val.forEach((item: unknown, i) => flattenNpm({ [`${key}_${i}`]: item }, prefix, env));
    else if (typeof val === 'object') flattenNpm(val as Record<string, unknown>, `${prefix}${key}_`, env);
    else env[`${prefix}${key}`] = String(val as string | number | boolean);
  }
}

/** The npm_package_* variables `manager` gives a script of the package `pkg`. Pure. */
export function packageEnv(manager: DirectManager, pkg: Readonly<Record<string, unknown>>): Record<string, string> {
  const env: Record<string, string> = {};
  if (manager === 'pnpm') flattenAll(pkg, 'npm_package_', env);
  else {
    const { name, version, config, engines, bin } = pkg;
    flattenNpm({ name, version, config, engines, bin }, 'npm_package_', env);
  }
  return env;
}

/** npm_config_user_agent as each says it (npm 11: `npm/11.19.1 node/v20.20.2 linux x64 workspaces/false`). Pure. */
export function userAgent(manager: DirectManager, version: string, node = process.version): string {
  const where = `node/${node} ${process.platform} ${process.arch}`;
  return manager === 'pnpm' ? `pnpm/${version} npm/? ${where}` : `npm/${version} ${where} workspaces/false`;
}

/**
 * The one shell script that runs `names` of `pkg.scripts` in order, each as `manager` runs it,
 * stopping at the first that fails. Names and values are quoted; variable names are
 * [A-Za-z0-9_] by construction. Pure.
 */
export function directCommand(
  manager: DirectManager,
  pkg: Readonly<Record<string, unknown>>,
  names: readonly string[],
  agent: string,
): string {
  const scripts = (pkg.scripts ?? {}) as Record<string, string>;
  const fixed = Object.entries({ ...packageEnv(manager, pkg), npm_config_user_agent: agent }).map(
    ([k, v]) => `${k}=${shellWord(v)}`,
  );
  const lines = [
    // pnpm's makeEnv starts from the environment without its npm_* variables.
    ...(manager === 'pnpm' ? [`unset $(env | sed -n 's/^\\(npm_[A-Za-z0-9_]*\\)=.*/\\1/p')`] : []),
    `export PATH="$PWD/node_modules/.bin:$PATH" INIT_CWD="$PWD" npm_package_json="$PWD/package.json" NODE="\${NODE:-$(command -v node)}"`,
    'export npm_node_execpath="$NODE"',
    `export ${fixed.join(' ')}`,
    names
      .map((n) => {
        const script = scripts[n] ?? '';
        return `npm_lifecycle_event=${n} npm_lifecycle_script=${shellWord(script)} sh -c ${shellWord(script)}`;
      })
      .join(' && '),
  ];
  return lines.join('\n');
}

/** `preinstall (node a.js), postinstall (node b.js)`: what ran, for a line. Pure. */
export function directSummary(pkg: Readonly<Record<string, unknown>>, names: readonly string[]): string {
  const scripts = (pkg.scripts ?? {}) as Record<string, string>;
  return names.map((n) => `${n} (${scripts[n] ?? ''})`).join(', ');
}

/**
 * The version of the `tool` the step names: its package.json beside the command found on PATH
 * (through links: /usr/bin/pnpm → …/pnpm/bin/pnpm.cjs), else package.json's `packageManager`
 * when it names that tool (corepack's shim runs that one), else `?`.
 */
export function managerVersion(
  tool: string,
  pathVar: string,
  cwd: string,
  pkg: Readonly<Record<string, unknown>>,
): string {
  const found = findCommand(tool, pathVar, cwd);
  if (found !== null) {
    let dir = path.dirname(fs.realpathSync(found));
    for (let i = 0; i < 4 && dir !== path.dirname(dir); i++, dir = path.dirname(dir)) {
      try {
        const own = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
        if (own.name === tool && typeof own.version === 'string') return own.version;
      } catch {
        // not here: one folder up
      }
    }
  }
  const declared = typeof pkg.packageManager === 'string' ? /^([\w-]+)@(\d[\w.+-]*)/.exec(pkg.packageManager) : null;
  return declared?.[1] === tool && declared[2] ? declared[2] : '?';
}
