import { describeCommand, type RepoCommand } from '../../config/trust.js';
import { trustCommands, trustState, type TrustState } from '../../trust/trust.js';
import type { CliIo, Register } from '../command.js';
import { trustedView } from '../../views/runs.js';
import { table } from '../format.js';

export const registerTrust: Register = (program, run) => {
  program
    .command('trust')
    .description(
      "show this repository's commands (setup, verify, teardown, agents) and trust them for this user; a changed set needs trust again",
    )
    .option('--yes', 'trust them without asking (read them first: `warren trust` shows them)')
    .option('--hash <sha256>', 'trust only if the set still has this hash (the one you reviewed)')
    .action((opts: { yes?: boolean; hash?: string }) =>
      run(async (env) => {
        const ctx = await env.project();
        const state = trustState(ctx);
        if (state.trusted && opts.hash === undefined) {
          const status =
            state.commands.length === 0
              ? "this repository's warren.yaml defines no commands: there is nothing to trust"
              : `trusted by you${state.trustedAt ? ` since ${state.trustedAt}` : ''}; a changed set needs trust again`;
          return {
            data: trustedView(state),
            human: [listing(state), status].filter((l) => l !== '').join('\n'),
          };
        }
        let yes = opts.yes === true || opts.hash !== undefined;
        let human = listing(state);
        // Ask only a person at a terminal; a script says --yes (or --hash), and --json never prompts.
        if (!yes && !env.json && env.io.interactive) {
          env.log(human);
          yes = await confirm(env.io, 'Trust these commands for this repository? [y/N] ');
          human = '';
        }
        if (!yes) {
          return {
            data: {
              trusted: false,
              hash: state.hash,
              commands: state.commands,
              changed: state.changed,
              removed: state.removed,
              trustedAt: state.trustedAt,
            },
            human: `${human}${human ? '\n' : ''}not trusted; nothing was recorded. Run \`warren trust --yes\` (or \`--hash ${state.hash}\`) once you have read them.`,
            exitCode: 1,
          };
        }
        const after = trustCommands(ctx, opts.hash);
        return {
          data: trustedView(after),
          human: `${human}${human ? '\n' : ''}trusted ${counted(after.commands)} for this repository (sha256 ${after.hash.slice(0, 12)}); warren runs them until they change`,
        };
      }),
    );
};

/** The set as a table; when an earlier set was trusted, `*` marks what is new or changed since. */
function listing(state: TrustState): string {
  const settings =
    state.settingsChanged.length > 0
      ? `warren.yaml's security settings changed since you trusted them: ${state.settingsChanged.join('; ')}`
      : '';
  const removed =
    state.removed.length > 0
      ? `removed since you trusted an earlier set: ${state.removed.map(describeCommand).join('; ')}`
      : '';
  if (state.commands.length === 0) return [removed, settings].filter((l) => l !== '').join('\n');
  return [commandTable(state), removed, settings].filter((l) => l !== '').join('\n');
}

function commandTable(state: TrustState): string {
  const marked = state.trustedAt !== null && !state.trusted;
  const isChanged = (c: RepoCommand) => state.changed.includes(c);
  const rows = state.commands.map((c) => [
    ...(marked ? [isChanged(c) ? '*' : ''] : []),
    c.kind,
    c.id,
    `${typeof c.run === 'string' ? c.run : JSON.stringify(c.run)}${c.prompt ? `  (prompt: ${c.prompt})` : ''}`,
  ]);
  const head = `this repository's commands and security settings (its main checkout's warren.yaml), sha256 ${state.hash}${marked ? `; * new or changed since you trusted an earlier set` : ''}:`;
  return `${head}\n${table([...(marked ? [''] : []), 'KIND', 'ID', 'RUNS (a string with sh -c, a list as argv)'], rows)}`;
}

/** y or yes trusts; anything else, Ctrl+D and Ctrl+C are a no. */
async function confirm(io: CliIo, question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises'); // only this prompt needs it
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  const interrupted = new AbortController();
  rl.on('SIGINT', () => interrupted.abort());
  try {
    return /^y(es)?$/i.test((await rl.question(question, { signal: interrupted.signal })).trim());
  } catch {
    io.stderr.write('\n');
    return false;
  } finally {
    rl.close();
  }
}

/** `4 command(s)`, or `4 command(s) and 1 setting(s)`. */
function counted(set: readonly RepoCommand[]): string {
  const settings = set.filter((c) => c.kind === 'setting').length;
  return `${set.length - settings} command(s)${settings > 0 ? ` and ${settings} setting(s)` : ''}`;
}
