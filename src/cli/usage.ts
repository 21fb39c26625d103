import type { Argument, Command, CommanderError, Option } from 'commander';
import { WarrenError } from '../errors.js';

/**
 * A command's usage line, as its reference page shows it (src/cli/docs-render.ts), and the one
 * form of a usage error: commander's own errors (an unknown command or option, a missing
 * argument) become a `USAGE` WarrenError with a hint (commander's "did you mean") and the usage
 * line of the command they concern, printed like every other refusal (src/cli/main.ts).
 */

const GLOBAL = 'warren [--repo <dir>] [--json]';

export function argumentUsage(arg: Argument): string {
  const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
  return arg.required ? `<${name}>` : `[${name}]`;
}

export function visibleOptions(cmd: Command): Option[] {
  return cmd.options.filter((o) => !o.hidden);
}

/** The commands `--help` lists below `cmd` (commander keeps `_hidden` private). */
function visibleCommands(cmd: Command): string[] {
  return cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).map((c) => c.name());
}

/** The command's full name below the program: `new`, `hooks install`. */
export function commandName(cmd: Command): string {
  const names: string[] = [];
  for (let at: Command | null = cmd; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** One command's usage; a required variadic last argument (exec's command, comment's text) may hold options of its own: it goes after `--`. */
export function synopsis(name: string, cmd: Command): string {
  const opts = visibleOptions(cmd).map((o) =>
    o.mandatory ? o.flags.replace(/^-\w, /, '') : `[${o.flags.replace(/^-\w, /, '')}]`,
  );
  const args = cmd.registeredArguments.map((a) =>
    a.variadic && a.required ? `-- ${argumentUsage(a)}` : argumentUsage(a),
  );
  return [GLOBAL, name, ...opts, ...args].join(' ');
}

/** The usage line of any command: the program's, a group's (`service start|stop|logs …`), or a command's. */
export function usageLine(cmd: Command): string {
  if (!cmd.parent) return `${GLOBAL} COMMAND ...`;
  // commander keeps it private: a group may also run something itself (`warren queue` lists).
  const runs = Boolean((cmd as unknown as { _actionHandler?: unknown })._actionHandler);
  if (cmd.commands.length > 0 && !runs) {
    return `${GLOBAL} ${commandName(cmd)} ${visibleCommands(cmd).join('|')} ...`;
  }
  return synopsis(commandName(cmd), cmd);
}

/**
 * Commander's refusal of the command line as a WarrenError (`USAGE`, exit 2): its message
 * without the `error: ` prefix and the "(Did you mean …?)" line, which becomes the hint, and the
 * usage line of `cmd`, the command the parser was at (`details.usage`).
 */
export function usageError(err: CommanderError, cmd: Command): WarrenError {
  const name = commandName(cmd);
  const full = name === '' ? 'warren' : `warren ${name}`;
  const lines = err.message.replace(/^error: /, '').split('\n');
  const suggested = /^\(Did you mean (.+)\?\)$/.exec(lines.at(-1) ?? '')?.[1];
  let what = (suggested === undefined ? lines : lines.slice(0, -1)).join(' ').trim();
  // warren, or a group, run without its command: commander shows its help as the error.
  if (err.code === 'commander.help') what = `\`${full}\` needs one of its commands: ${visibleCommands(cmd).join(', ')}`;
  const help = `\`warren help${name === '' ? '' : ` ${name}`}\``;
  const guess =
    suggested === undefined
      ? ''
      : `Did you mean \`${suggested.startsWith('-') ? suggested : `${full} ${suggested}`}\`? `;
  const group = cmd.commands.length > 0;
  const rest = !cmd.parent
    ? `${help} lists every command.`
    : group
      ? `${help} lists its commands.`
      : `${help} shows its arguments and options.`;
  return new WarrenError('USAGE', `${what.replace(/\.$/, '')}; nothing was run.`, {
    hint: `${guess}${rest}`,
    details: { usage: usageLine(cmd) },
  });
}

/** Commander's exits that are no error: help asked for, the version. */
export function isCleanExit(err: CommanderError): boolean {
  return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version';
}
