import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';

/** The command of a run, checked before anything starts: an argv a command line can carry, and a file the host can run. */

/** Refuses (USAGE) an argument with a NUL byte before anything starts: no command line can carry one. */
export function assertArgvCarriable(argv: readonly string[]): void {
  const at = argv.findIndex((arg) => arg.includes('\0'));
  if (at < 0) return;
  throw new WarrenError(
    'USAGE',
    `argument ${at} of the command (${JSON.stringify(argv[at]?.slice(0, 40))}) contains a NUL byte, which no command-line argument can carry; nothing was run.`,
    {
      hint: 'Remove the NUL byte.',
    },
  );
}

/**
 * Where the command would be run from, in the order execvp tries them: a path with a `/` as it
 * is, a bare name in each `PATH` entry. Relative ones are the run's: against `cwd`, the
 * workspace, where the command runs (never warren's own working directory). Pure.
 */
export function commandCandidates(cmd: string, pathVar: string, cwd: string): string[] {
  if (cmd.includes('/')) return [path.resolve(cwd, cmd)];
  return pathVar
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.resolve(cwd, dir, cmd));
}

/**
 * The command's file as the host sees it, so that one that is not there is refused before
 * anything starts (no shell to say "not found" later); null when the host has none.
 */
export function findCommand(cmd: string, pathVar: string, cwd: string): string | null {
  if (cmd === '')
    throw new WarrenError('USAGE', 'no command given; nothing was run.', { hint: 'Put the command after `--`.' });
  for (const file of commandCandidates(cmd, pathVar, cwd)) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // next
    }
  }
  return null;
}

export function commandNotFound(cmd: string): WarrenError {
  return new WarrenError(
    'COMMAND_FAILED',
    `command ${JSON.stringify(cmd)} was not found${cmd.includes('/') ? '' : ' on PATH'} or is not executable; nothing was run.`,
    {
      hint: 'Check the name, or install it.',
    },
  );
}
