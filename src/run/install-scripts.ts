import { directCommand, directSummary, userAgent, type DirectManager } from './lifecycle-direct.js';

/**
 * What an install runs of the project's own package.json, per package manager (issue 41): the
 * root package's lifecycle scripts. They are per checkout — husky's `prepare` writes `.husky/_`
 * and `core.hooksPath` — so a skipped install runs them alone, never the install: npm's and
 * pnpm's directly as they run them (lifecycle-direct.ts: starting pnpm cost more than the
 * scripts), yarn's by the same tool's `run`. Measured with npm 11, pnpm 9, yarn 1.22 and yarn 4
 * (test/package-managers): an install of a package.json holding every script logged which ran,
 * in which order.
 */

export type ScriptManager = 'npm' | 'pnpm' | 'yarn-classic' | 'yarn-berry';

interface Lifecycle {
  /** The root package's scripts an install runs, in the order it runs them. */
  runs: readonly string[];
  /**
   * How script `name` runs alone: directly, as npm and pnpm run it (lifecycle-direct.ts), or by
   * the tool's own `run` (`tool`: the word the setup step wrote, e.g. `yarn`), which runs yarn
   * berry's scripts in its own environment (Plug'n'Play and all).
   */
  how: { direct: DirectManager } | { command(tool: string, name: string): string };
  /** Does that command also run `preNAME` and `postNAME`? (yarn classic's `run` always does.) */
  runsPrePost: boolean;
}

const LIFECYCLE = {
  npm: {
    runs: ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'],
    how: { direct: 'npm' },
    runsPrePost: false,
  },
  pnpm: {
    runs: ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'],
    how: { direct: 'pnpm' },
    runsPrePost: false,
  },
  'yarn-classic': {
    runs: ['preinstall', 'install', 'postinstall', 'prepublish', 'prepare'],
    how: { command: (tool, name) => `${tool} run ${name}` },
    runsPrePost: true,
  },
  // yarn 2+ runs no pre/post scripts of `run`, and no `prepare` on install.
  'yarn-berry': {
    runs: ['preinstall', 'install', 'postinstall'],
    how: { command: (tool, name) => `${tool} run ${name}` },
    runsPrePost: false,
  },
} as const satisfies Record<ScriptManager, Lifecycle>;

/** Every script name an install of any of them runs of the root package. */
export const ANY_INSTALL_SCRIPT: ReadonlySet<string> = new Set(Object.values(LIFECYCLE).flatMap((l) => l.runs));

export type PerCheckout =
  | {
      /** The scripts the install would run, in its order. */
      scripts: string[];
      /** One shell command that runs exactly those. */
      command: string;
      /** What it runs, for a line: the scripts and their text, and how (`directly as pnpm runs them`). */
      summary: string;
    }
  | { refused: string };

/**
 * The per-checkout part of an install by `manager` (invoked as `tool`, whose version is
 * `version`) of the root package `pkg`: the lifecycle scripts it would run and the command that
 * runs exactly them, or why no command can. Pure.
 */
export function perCheckoutScripts(
  manager: ScriptManager,
  tool: string,
  pkg: Readonly<Record<string, unknown>>,
  version = '?',
): PerCheckout {
  const lifecycle: Lifecycle = LIFECYCLE[manager];
  const scripts = (typeof pkg.scripts === 'object' && pkg.scripts !== null ? pkg.scripts : {}) as Record<
    string,
    unknown
  >;
  const has = (name: string): boolean => typeof scripts[name] === 'string';
  const names = lifecycle.runs.filter(has);
  const how = lifecycle.how;
  if ('direct' in how)
    return {
      scripts: names,
      command: names.length > 0 ? directCommand(how.direct, pkg, names, userAgent(how.direct, version)) : '',
      summary: `${directSummary(pkg, names)}, directly as ${how.direct} runs them`,
    };
  let invoked = names;
  if (lifecycle.runsPrePost) {
    // `yarn run install` also runs preinstall and postinstall: invoke each base once.
    invoked = names.filter((n) => !['pre', 'post'].some((p) => n.startsWith(p) && names.includes(n.slice(p.length))));
    const extra = invoked.flatMap((n) => [`pre${n}`, `post${n}`]).filter((n) => has(n) && !names.includes(n));
    if (extra.length > 0)
      return {
        refused: `\`${how.command(tool, invoked[0] ?? '')}\` would also run ${extra.join(', ')}, which the install does not`,
      };
  }
  const command = invoked.map((n) => how.command(tool, n)).join(' && ');
  return { scripts: names, command, summary: `${names.join(', ')} by \`${command}\`` };
}

/** The manager whose table applies to what `status` recorded as the tree's installer. */
export function scriptManager(installed: string | null | undefined): ScriptManager | null {
  return installed === 'npm' || installed === 'pnpm' || installed === 'yarn-classic' || installed === 'yarn-berry'
    ? installed
    : null;
}
