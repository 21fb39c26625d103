import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { WarrenError } from '../errors.js';
import { terminalStream, terminalText } from '../util/terminal-text.js';
import { environmentError } from '../state/faults.js';
import { errorDocument, recordRefusal } from '../views/errors.js';
import {
  makeEnv,
  processIo,
  type CliEnv,
  type CliIo,
  type CommandResult,
  type Handler,
  type Register,
} from './command.js';
import { colourWanted, painter } from './colour.js';
import { checkExecArgv } from './exec-argv.js';
import { isCleanExit, usageError, usageLine } from './usage.js';
import { paintRefusal } from './highlight.js';
import { longerThan, page, pagerCommand } from './pager.js';
import { isTerminal } from './terminal-output.js';

interface Outcome {
  exitCode: number;
}

/** What a command's action calls with the handler it built (main's runs it and prints the result). */
export type Runner = (handler: Handler) => Promise<void>;

/**
 * The command line as commander objects: the given commands (src/cli/commands/all.ts: every
 * one), their options, arguments and defaults. `main` runs it; the docs generator
 * (scripts/docs.js) walks the whole of it with a runner that never runs.
 * Commander prints none of its own errors: each becomes a `USAGE` refusal, printed by `main` in
 * the one form every refusal has, with the usage line of the command it concerns (src/cli/usage.ts).
 */
export function buildProgram(commands: readonly Register[], run: Runner, io: () => CliIo = processIo): Command {
  const version = readVersion();
  const program = new Command('warren')
    .description('One task, one git worktree: run many coding agents on one repository, safely.')
    .version(version, '-V, --version')
    // `-v` too, as most tools have it (no command of warren's takes a -v of its own).
    .addOption(new Option('-v').hideHelp())
    .on('option:v', () => {
      io().stdout.write(`${version}\n`);
      throw new CommanderError(0, 'commander.version', version);
    })
    .addOption(
      new Option('--repo <dir>', 'the repository (any folder inside it)').default('.', 'the current directory'),
    )
    .option('--json', 'print exactly one JSON document on stdout')
    .option('--no-pager', 'never show long output (diff, show, help) through a pager')
    .showHelpAfterError(false)
    .configureOutput({
      writeOut: (s) => io().stdout.write(terminalText(s, 'block')),
      writeErr: () => undefined,
    });
  for (const register of commands) register(program, run);
  const withEvery = (cmd: Command): void => {
    // Which command the parser was at when it refused: its usage line goes with the refusal.
    cmd.exitOverride((err) => {
      if (!isCleanExit(err)) throw usageError(err, cmd);
      throw err;
    });
    cmd.configureOutput(program.configureOutput());
    cmd.commands.forEach(withEvery);
  };
  withEvery(program);
  return program;
}

/**
 * The one place that prints and chooses the exit code: 0 done, 1 refused or failed,
 * 2 bad input (nothing touched), 124 a supervised command timed out. What it prints for people
 * goes through `terminalText` (src/util/terminal-text.ts): file names, branches, commit messages
 * and logs are an agent's, and none of their control characters reaches the terminal as one.
 * `--json` prints the exact data (JSON's own escaping covers the controls).
 */
export async function main(argv: readonly string[], prepared: PreparedMain, io: CliIo = processIo()): Promise<number> {
  const { program, session } = prepared;
  const json = argv.includes('--json');
  session.json = json;
  session.io = io;
  session.argv = argv;
  // --repo's default is the folder the command runs in.
  program.setOptionValueWithSource('repo', io.cwd, 'default');
  try {
    checkExecArgv(argv);
    await program.parseAsync([...argv], { from: 'user' });
    return session.outcome.exitCode;
  } catch (thrown) {
    const err = withUsage(environmentError(thrown) ?? thrown, session.command);
    recordCliRefusal(session.env, err, argv);
    session.env?.reporter.settle();
    return report(io, err, json);
  } finally {
    session.env?.close();
  }
}

/** The command line built of the given commands, waiting for one command's arguments (`main` runs it, once). */
export interface PreparedMain {
  program: Command;
  session: {
    json: boolean;
    outcome: Outcome;
    env: CliEnv | null;
    io: CliIo;
    argv: readonly string[];
    /** The command whose action runs: a USAGE refusal from it carries its usage line. */
    command?: Command;
  };
}

export function prepareMain(commands: readonly Register[], io: CliIo = processIo()): PreparedMain {
  const session: PreparedMain['session'] = { json: false, outcome: { exitCode: 0 }, env: null, io, argv: [] };
  const run: Runner = async (handler) => {
    const opts = program.opts<{ repo: string; json?: boolean; pager: boolean }>();
    const env = makeEnv(session.io, path.resolve(session.io.cwd, opts.repo), opts.json === true);
    session.env = env;
    const result = await handler(env);
    env.reporter.settle();
    await print(session.io, env.json, result, opts.pager);
    session.outcome.exitCode = result.exitCode ?? 0;
  };
  const program = buildProgram(commands, run, () => session.io);
  program.hook('preAction', (_program, command) => {
    session.command = command;
  });
  return { program, session };
}

/** A USAGE refusal of a command's own (a bad combination of options) with the command's usage line, like commander's. */
function withUsage(err: unknown, command: Command | undefined): unknown {
  if (!(err instanceof WarrenError) || err.code !== 'USAGE' || !command || err.details?.usage !== undefined) return err;
  return new WarrenError(err.code, err.message, {
    ...(err.hint === undefined ? {} : { hint: err.hint }),
    cause: err.cause,
    details: { ...err.details, usage: usageLine(command) },
  });
}

/** Every refusal is an event too, against the project (and task) it concerns, once one was opened. */
function recordCliRefusal(env: CliEnv | null, err: unknown, argv: readonly string[]): void {
  if (env && err instanceof WarrenError) recordRefusal(env.opened(), env.taskId, err, argv.join(' '));
}

async function print(io: CliIo, json: boolean, result: CommandResult, pager: boolean): Promise<void> {
  if (json) {
    io.stdout.write(`${JSON.stringify(result.data, null, 2)}\n`);
    return;
  }
  if (result.human === '') return;
  // Colour goes around the text once it is safe to print (src/cli/colour.ts).
  const paint = painter(colourWanted(io.stdout, false));
  const shown = `${result.colour ? result.colour(humanText(result), paint) : humanText(result)}\n`;
  if (result.paged && pager && (await paged(io.stdout, shown))) return;
  io.stdout.write(shown);
}

/** `shown` through the user's pager when stdout is a terminal it does not fit on (src/cli/pager.ts); false when it was not. */
async function paged(stdout: NodeJS.WritableStream, shown: string): Promise<boolean> {
  const { rows, columns } = stdout as { rows?: number; columns?: number };
  // A terminal of unknown size (0 rows: a pseudo-terminal nobody sized) is not paged.
  if (!isTerminal(stdout) || !rows || !longerThan(shown, rows, columns || 80)) return false;
  const command = pagerCommand();
  return command !== null && page(shown, command);
}

function humanText({ human, humanLayout }: CommandResult): string {
  if (humanLayout !== 'stream') return terminalText(human, 'block');
  const stream = terminalStream();
  return stream.write(human) + stream.flush();
}

function report(io: CliIo, thrown: unknown, json: boolean): number {
  // A full disk or a read-only file system is the machine's refusal, not a bug: said as one.
  const err = environmentError(thrown) ?? thrown;
  // Help or the version, printed; commander's refusals reached here as WarrenErrors (src/cli/usage.ts).
  if (err instanceof CommanderError) return isCleanExit(err) ? 0 : 2;
  const { prefix, hint } = paintRefusal(painter(colourWanted(io.stderr, json)));
  if (json) {
    // The one error document every front end answers with (src/views/errors.ts).
    io.stdout.write(`${JSON.stringify(errorDocument(err), null, 2)}\n`);
    return err instanceof WarrenError ? err.exitCode : 1;
  }
  if (err instanceof WarrenError) {
    const usage = err.details?.usage;
    io.stderr.write(
      `${prefix} ${terminalText(err.message, 'block')}\n${err.hint ? `  ${hint} ${terminalText(err.hint, 'block')}\n` : ''}${typeof usage === 'string' ? `  usage: ${usage}\n` : ''}`,
    );
    return err.exitCode;
  }
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  io.stderr.write(`${prefix} internal error (a bug): ${terminalText(message, 'block')}\n`);
  return 1;
}

function readVersion(): string {
  // Synchronous on purpose: fs/promises' readFile loads Node's streams, ~8 ms of every command.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
