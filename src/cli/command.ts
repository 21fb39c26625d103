import fs from 'node:fs';
import type { Command } from 'commander';
import { openProject, openStore, type StoreOptions } from '../composition.js';
import { assertOwnHome, warrenHome } from '../state/db.js';
import type { Store } from '../state/store.js';
import type { ProjectContext } from '../workspace/context.js';
import type { Reporter } from '../workspace/reporter.js';

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
  reporter: Reporter;
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
  human: string;
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

export function cliReporter(io: CliIo, json: boolean): Reporter {
  return {
    line: (text) => io.stderr.write(`${text}\n`),
    // stdout belongs to the one JSON document under --json.
    output: { stdout: json ? io.stderr : io.stdout, stderr: io.stderr },
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
