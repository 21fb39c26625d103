import fs from 'node:fs';
import path from 'node:path';
import { runBounded } from '../system/spawn.js';

/**
 * Long output (a patch, a task's events, a help page) read page by page, as git does: on a
 * terminal only, when the text has more lines than the terminal has rows, through the user's
 * pager — `$WARREN_PAGER`, else `$PAGER`, else `less` with `LESS=FRX` when LESS is unset (quit
 * at once if it fits, pass colours, leave the text on the screen). An empty value or `cat`
 * means none, like GIT_PAGER's; `--no-pager`, `--json` and a pipe never page.
 *
 * The pager is the user's own program, from their own environment, run through `sh -c` as git
 * runs `core.pager` (a PAGER of `less -S` is a command line); it is given warren's text on its
 * stdin and this process's terminal, in warren's process group (it reads the keyboard), and
 * warren waits for it, ignoring ctrl-c meanwhile (less takes it; warren would leave it behind).
 */

/** The pager's command line from the environment; null when it names none (or `less` is not installed, and was not named). */
export function pagerCommand(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env.WARREN_PAGER ?? env.PAGER;
  if (named !== undefined) {
    const command = named.trim();
    return command === '' || command === 'cat' ? null : command;
  }
  return onPath('less', env.PATH ?? '') ? 'less' : null;
}

/** Whether `text` takes more rows than the terminal has (a line longer than it is wide takes several). */
export function longerThan(text: string, rows: number, columns: number): boolean {
  let used = 0;
  for (const line of text.split('\n')) {
    used += Math.max(1, Math.ceil(visibleLength(line) / Math.max(1, columns)));
    if (used >= rows) return true;
  }
  return false;
}

/**
 * Shows `text` through `command`; false when the pager could not show it (it could not start,
 * or its shell did not find it: exit 127), so that the caller prints it itself and nothing is lost.
 */
export async function page(text: string, command: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const ignore = (): void => undefined;
  process.on('SIGINT', ignore);
  try {
    const shown = await runBounded({
      argv: ['sh', '-c', command],
      stdin: text,
      stdout: 'inherit',
      stderr: 'inherit',
      group: false,
      env: { ...env, LESS: env.LESS ?? 'FRX', LV: env.LV ?? '-c' },
    });
    return shown.spawnError === null && shown.exitCode !== 127;
  } finally {
    process.off('SIGINT', ignore);
  }
}

/** How many columns a line takes: its colour sequences take none. */
function visibleLength(line: string): number {
  // eslint-disable-next-line no-control-regex
  return line.replace(/\x1b\[[0-9;:]*m/g, '').length;
}

function onPath(name: string, PATH: string): boolean {
  return PATH.split(':').some((dir) => {
    if (dir === '') return false;
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
