import { WarrenError } from '../errors.js';

/**
 * Pure: refuses an `exec` whose command has a word starting with `-` and no `--` before it.
 * warren would read such a word as its own option: an unknown one fails, a known one
 * (`--timeout`, `--json`) is silently taken from the command. Options before the command's first
 * word are warren's; `exec ID -- CMD ARGS` passes every word after `--` to CMD untouched.
 * Global options (`--repo DIR`, `--repo=DIR`, `--json`) may come before `exec`.
 */
export function checkExecArgv(argv: readonly string[]): void {
  const at = commandIndex(argv);
  if (at === -1 || argv[at] !== 'exec') return;
  const rest = argv.slice(at + 1);
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
    throw new WarrenError(
      'USAGE',
      `\`warren exec\` would read ${JSON.stringify(option)} as its own option, not as part of the command; nothing was run.`,
      {
        hint: `Put the command after \`--\`: warren exec ${[id, ...own].join(' ')} -- ${command.join(' ')} (warren's own options, such as --timeout, go before \`--\`).`,
      },
    );
  }
}

/** Where the command's name is: the first word that is not a global option (-1 when an option or nothing comes first). */
function commandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') return -1;
    if (arg === '--json' || arg.startsWith('--repo=')) continue;
    if (arg === '--repo') {
      i++;
      continue;
    }
    return arg.startsWith('-') ? -1 : i;
  }
  return -1;
}
