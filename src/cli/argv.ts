/**
 * How warren's command line is read before commander parses it — by the launcher choosing a
 * build (bin/warren.js), by `warren warm`'s client, by the prefetch and by `exec`'s check — so
 * that all of them agree on which word is the command. Global options (`--repo DIR`,
 * `--repo=DIR`, `--json`) may come before the command's name and anywhere after it, up to `--`.
 * Imports nothing: the client of `warren warm`, the first code every command loads, holds it.
 */
export interface CommandWords {
  /** The command's name, or null: none, or an option other than the global ones came first (help, the version, a mistake). */
  command: string | null;
  /** Where the command's name is in argv (-1 without one). */
  at: number;
  /** The last `--repo` before `--`, as commander takes it. */
  repo: string | undefined;
  /** `--help`, `-h`, `--version` or `-V` before `--`: the command line only prints. */
  printsOnly: boolean;
}

export function readCommandWords(argv: readonly string[]): CommandWords {
  const words: CommandWords = { command: null, at: -1, repo: undefined, printsOnly: false };
  let looking = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') break;
    if (arg === '--repo') words.repo = argv[++i];
    else if (arg.startsWith('--repo=')) words.repo = arg.slice('--repo='.length);
    else if (arg === '--help' || arg === '-h' || arg === '--version' || arg === '-V') words.printsOnly = true;
    if (!looking || arg === '--json' || arg === '--repo' || arg.startsWith('--repo=')) continue;
    looking = false;
    if (!arg.startsWith('-')) Object.assign(words, { command: arg, at: i });
  }
  return words;
}
