import { WarrenError } from '../errors.js';
import { readCommandWords } from './argv.js';

/**
 * What the command line reads from its arguments before commander does: the guesses its entry
 * makes before its code has loaded (src/cli/entry.ts), and `exec`'s check before parsing
 * (src/cli/main.ts). Pure, so it is tested directly, and small: both builds load it first.
 */

/**
 * The folder a command will look for its repository in (`--repo DIR`, else the current one),
 * or null for what never opens one (no command, help, the version, completion scripts). A
 * guess: a wrong one only means the answer is not taken (it is keyed by the folder).
 */
export function repositoryGuess(args: readonly string[], cwd: string): string | null {
  const words = readCommandWords(args);
  if (words.command === null || words.command === 'help' || words.command === 'completion' || words.printsOnly) return null;
  return words.repo ?? cwd;
}

/** What `warren new` will ask of git once the repository is found: its base (when given) and branch. */
export interface NewTaskGuess {
  /** `--base`, or undefined for the branch checked out in the main worktree. */
  base?: string;
  branch: string;
}

/** The options of `warren new`'s command line that take a value. */
const VALUED = ['--repo', '--sandbox', '--base'];

/**
 * The base and branch of a `warren new TYPE ID` command line, read as its options parse them
 * (`--repo DIR` and `--json` anywhere; `--base REF`, `--sandbox KIND` and the flags of `new`),
 * or null for any other command or anything this reading is unsure of (an option it does not
 * know, a missing argument): the command then asks git itself. A wrong guess is never used:
 * the answer is taken only for exactly the branches the command asks about.
 */
export function newTaskGuess(args: readonly string[]): NewTaskGuess | null {
  const positional: string[] = [];
  let base: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    if (arg === '--json' || arg === '--no-sync' || arg === '--no-setup' || arg === '--require-sandbox') continue;
    const name = VALUED.find((n) => arg === n || arg.startsWith(`${n}=`));
    if (name === undefined) return null; // an option this reading does not know
    const value = arg === name ? args[++i] : arg.slice(name.length + 1);
    if (value === undefined) return null;
    if (name === '--base') base = value;
  }
  const [command, type, id, ...rest] = positional;
  if (command !== 'new' || type === undefined || id === undefined || rest.length > 0) return null;
  return { ...(base !== undefined && base !== '' ? { base } : {}), branch: `${type}/${id}` };
}

/**
 * Pure: refuses an `exec` whose command has a word starting with `-` and no `--` before it.
 * warren would read such a word as its own option: an unknown one fails, a known one
 * (`--timeout`, `--json`) is silently taken from the command. Options before the command's first
 * word are warren's; `exec ID -- CMD ARGS` passes every word after `--` to CMD untouched.
 */
export function checkExecArgv(argv: readonly string[]): void {
  const words = readCommandWords(argv);
  if (words.command !== 'exec') return;
  const rest = argv.slice(words.at + 1);
  const own: string[] = [];
  let id: string | null = null;
  for (let j = 0; j < rest.length; j++) {
    const word = rest[j] ?? '';
    if (word === '--') return;
    if (word.startsWith('-')) {
      own.push(word);
      if (word === '--timeout' || word === '--repo') own.push(rest[++j] ?? '');
      continue;
    }
    if (id === null) {
      id = word;
      continue;
    }
    // The command's first word: a word after it that starts with `-` needs `--` before the command.
    const command = rest.slice(j);
    const option = command.find((w) => w.startsWith('-'));
    if (option === undefined || command.includes('--')) return;
    throw new WarrenError('USAGE', `\`warren exec\` would read ${JSON.stringify(option)} as its own option, not as part of the command; nothing was run.`, {
      hint: `Put the command after \`--\`: warren exec ${[id, ...own].join(' ')} -- ${command.join(' ')} (warren's own options, such as --timeout, go before \`--\`).`,
    });
  }
}
