/**
 * What an install runs of the project's own package.json, per package manager (issue 41): the
 * root package's lifecycle scripts. They are per checkout — husky's `prepare` writes `.husky/_`
 * and `core.hooksPath` — so a skipped install runs them alone, each by the same tool's `run`,
 * never the install. Measured with npm 11, pnpm 9, yarn 1.22 and yarn 4 (test/package-managers):
 * an install of a package.json holding every script logged which ran, in which order.
 */

export type ScriptManager = 'npm' | 'pnpm' | 'yarn-classic' | 'yarn-berry';

interface Lifecycle {
  /** The root package's scripts an install runs, in the order it runs them. */
  runs: readonly string[];
  /** The command that runs script `name` alone (`tool`: the word the setup step wrote, e.g. `npm`). */
  command(tool: string, name: string): string;
  /** Does that command also run `preNAME` and `postNAME`? (yarn classic's `run` always does.) */
  runsPrePost: boolean;
}

const LIFECYCLE = {
  // `npm run --ignore-scripts X` runs X and not its pre/post scripts (npm's documented meaning).
  npm: {
    runs: ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'],
    command: (tool, name) => `${tool} run --ignore-scripts ${name}`,
    runsPrePost: false,
  },
  // pnpm runs pre/post scripts of `run` unless enable-pre-post-scripts is off.
  pnpm: {
    runs: ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'],
    command: (tool, name) => `${tool} run --config.enable-pre-post-scripts=false ${name}`,
    runsPrePost: false,
  },
  'yarn-classic': {
    runs: ['preinstall', 'install', 'postinstall', 'prepublish', 'prepare'],
    command: (tool, name) => `${tool} run ${name}`,
    runsPrePost: true,
  },
  // yarn 2+ runs no pre/post scripts of `run`, and no `prepare` on install.
  'yarn-berry': {
    runs: ['preinstall', 'install', 'postinstall'],
    command: (tool, name) => `${tool} run ${name}`,
    runsPrePost: false,
  },
} as const satisfies Record<ScriptManager, Lifecycle>;

/** Every script name an install of any of them runs of the root package. */
export const ANY_INSTALL_SCRIPT: ReadonlySet<string> = new Set(Object.values(LIFECYCLE).flatMap((l) => l.runs));

export type PerCheckout =
  | {
      /** The scripts the install would run, in its order. */
      scripts: string[];
      /** One shell command that runs exactly those (names from the table above: nothing to quote). */
      command: string;
    }
  | { refused: string };

/**
 * The per-checkout part of an install by `manager` (invoked as `tool`) of a root package whose
 * scripts are `scripts`: the lifecycle scripts it would run and the command that runs exactly
 * them, or why no command can. Pure.
 */
export function perCheckoutScripts(
  manager: ScriptManager,
  tool: string,
  scripts: Readonly<Record<string, unknown>>,
): PerCheckout {
  const lifecycle: Lifecycle = LIFECYCLE[manager];
  const has = (name: string): boolean => typeof scripts[name] === 'string';
  const names = lifecycle.runs.filter(has);
  let invoked = names;
  if (lifecycle.runsPrePost) {
    // `yarn run install` also runs preinstall and postinstall: invoke each base once.
    invoked = names.filter((n) => !['pre', 'post'].some((p) => n.startsWith(p) && names.includes(n.slice(p.length))));
    const extra = invoked.flatMap((n) => [`pre${n}`, `post${n}`]).filter((n) => has(n) && !names.includes(n));
    if (extra.length > 0)
      return {
        refused: `\`${lifecycle.command(tool, invoked[0] ?? '')}\` would also run ${extra.join(', ')}, which the install does not`,
      };
  }
  return { scripts: names, command: invoked.map((n) => lifecycle.command(tool, n)).join(' && ') };
}

/** The manager whose table applies to what `status` recorded as the tree's installer. */
export function scriptManager(installed: string | null | undefined): ScriptManager | null {
  return installed === 'npm' || installed === 'pnpm' || installed === 'yarn-classic' || installed === 'yarn-berry'
    ? installed
    : null;
}
