import fs from 'node:fs';
import type { Command } from 'commander';
import { openProject, openStore, type StoreOptions } from '../composition.js';
import { assertOwnHome, warrenHome } from '../state/db.js';
import type { Store } from '../state/store.js';
import type { ProjectContext } from '../workspace/context.js';
import type { Reporter } from '../workspace/reporter.js';
import { terminalText } from '../util/terminal-text.js';
import { colourWanted, painter, type Paint } from './colour.js';
import { paintNotice } from './highlight.js';
import { StepLines } from './progress.js';
import { isTerminal, terminalOutput, TerminalOutput } from './terminal-output.js';

/**
 * Where a command's words go and come from, and how warren runs itself: the process's own
 * (`processIo`), or a test's, which runs commands in its own process. Nothing in the command
 * line touches process.stdout, stderr, stdin or argv but through this.
 */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** What the command reads (a hook's payload, the answer to trust's question). */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** What a supervised command (`exec`) reads: this process's own stdin, or the given text. */
  commandStdin: 'inherit' | { text: string };
  /** Where the command runs: `--repo`'s default. */
  cwd: string;
  /** The command line that runs warren itself: a hook's command, the queue's background worker. */
  self: readonly string[];
  /** Whether stderr is a person's terminal (trust asks only one). */
  interactive: boolean;
}

/** The process's own streams: what bin/warren.js runs with. */
export function processIo(): CliIo {
  const bin = process.argv[1];
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    commandStdin: 'inherit',
    cwd: process.cwd(),
    self: [process.execPath, ...(bin ? [fs.realpathSync(bin)] : [])],
    interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
  };
}

/** What every command handler gets: the global options and lazily opened state. */
export interface CliEnv {
  io: CliIo;
  repoDir: string;
  json: boolean;
  /** Human-readable progress and warnings go here (stderr), never into --json stdout. */
  log(line: string): void;
  /** What library calls report through: lines on stderr; a command's output on stdout and stderr (both on stderr with --json). */
  reporter: CliReporter;
  store(): Store;
  /**
   * The repository, opened once. `lenientConfig`: for commands that need nothing from
   * warren.yaml (list, show, scan, gc): an invalid file is then one warning line on stderr
   * instead of a refusal.
   */
  project(options?: { lenientConfig?: boolean }): Promise<ProjectContext>;
  /** The opened project, if any: refusals are recorded against it. */
  opened(): ProjectContext | null;
  /** The task a command is about, once validated: refusals are recorded against it. */
  taskId: string | null;
  close(): void;
}

/** Handlers return data; the entry point prints it and sets the exit code. */
export interface CommandResult<T = unknown> {
  data: T;
  /** What people read; printed through `terminalText` (src/util/terminal-text.ts), never as it is. */
  human: string;
  /**
   * How `human` is made safe: `block` (the default) keeps newlines and tabs and shows every other
   * control character as an escape; `stream`, for a log, also keeps `\r` and colours.
   */
  humanLayout?: 'block' | 'stream';
  /**
   * Colour for `human` where stdout takes it (src/cli/colour.ts): given the text as it will be
   * printed, made safe already, it only adds colour around it (src/cli/highlight.ts).
   */
  colour?: (shown: string, paint: Paint) => string;
  /** Long output people read page by page (a patch, a help page): shown through a pager on a terminal (src/cli/pager.ts). */
  paged?: boolean;
  /** Default 0. A command like `verify` or `exec` may report data and still exit non-zero. */
  exitCode?: number;
}

export type Handler = (env: CliEnv) => Promise<CommandResult>;

/** Each command file registers itself; `run` receives the handler the action built. */
export type Register = (program: Command, run: (handler: Handler) => Promise<void>) => void;

/** The state under WARREN_HOME, refused (HOME_NOT_OWNED) when it belongs to another user. */
export function openOwnStore(options: StoreOptions = {}): Store {
  const home = warrenHome();
  assertOwnHome(home);
  return openStore(home, options);
}

/** The reporter of the command line, which shares its terminal with the commands it runs. */
export interface CliReporter extends Reporter {
  /**
   * Before warren prints its own words: what a command's output left unfinished on a terminal is
   * ended, and a step's live line too.
   */
  settle(): void;
}

/**
 * Lines on stderr, made safe to print (their names may be an agent's: see
 * src/util/terminal-text.ts), then coloured; a command's output shown live, made safe when it
 * reaches a terminal (`terminalOutput`). When stderr is a terminal (and not with --json), steps
 * are drawn there as they run (src/cli/progress.ts); elsewhere they say nothing, and what is
 * printed is as it was without them.
 */
export function cliReporter(io: CliIo, json: boolean): CliReporter {
  const paint = painter(colourWanted(io.stderr, json));
  const steps = !json && isTerminal(io.stderr) ? new StepLines(io.stderr, paint, process.env.TERM !== 'dumb') : null;
  const before = steps ? () => steps.beforeOutput() : undefined;
  // stdout belongs to the one JSON document under --json.
  const output = {
    stdout: terminalOutput(json ? io.stderr : io.stdout, before),
    stderr: terminalOutput(io.stderr, before),
  };
  const flush = (): void => {
    for (const stream of [output.stdout, output.stderr]) if (stream instanceof TerminalOutput) stream.settle();
  };
  return {
    line: (text) => {
      flush();
      const shown = `${paintNotice(terminalText(text, 'block'), paint)}\n`;
      if (steps) steps.line(shown);
      else io.stderr.write(shown);
    },
    output,
    ...(steps
      ? {
          step: (label: string) => {
            flush();
            return steps.start(label);
          },
        }
      : {}),
    settle: () => {
      flush();
      steps?.settle();
    },
  };
}

export function makeEnv(io: CliIo, repoDir: string, json: boolean): CliEnv {
  let store: Store | null = null;
  let project: Promise<ProjectContext> | null = null;
  let opened: ProjectContext | null = null;
  const reporter = cliReporter(io, json);
  return {
    io,
    repoDir,
    json,
    taskId: null,
    reporter,
    log: reporter.line,
    store() {
      store ??= openOwnStore({ onWait: reporter.line, onNotice: reporter.line });
      return store;
    },
    project(options = {}) {
      project ??= openProject(repoDir, {
        store: () => this.store(),
        reporter,
        lenientConfig: options.lenientConfig === true,
      }).then((ctx) => {
        if (ctx.configProblem)
          reporter.line(
            `warren: warn: ${ctx.configProblem.message.replace(/[;.]?\s*[Nn]othing was changed\.?$/, '')} — ignored here: this command needs nothing from it, and uses the default workspace root ${ctx.root}`,
          );
        return (opened = ctx);
      });
      return project;
    },
    opened: () => opened,
    close() {
      store?.close();
    },
  };
}
