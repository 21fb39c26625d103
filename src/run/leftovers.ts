import path from 'node:path';
import type { TreeProcess } from '../system/proc.js';

/**
 * What an agent left running once it gave its final result, told from the agent itself. Pure.
 *
 * The agent's own chain is the agent's process and every wrapper on the way to it. Each wrapper
 * warren puts around a command (the PID namespace's init, bwrap and its init, the egress bridge,
 * a mount step) ends its command line with the command's, and so does the agent's own process
 * (a script's interpreter line keeps the script's path and arguments; a CLI that starts itself
 * again with other runtime flags keeps its arguments). A process with one of those below it is
 * a wrapper too. Everything else under the run — a background shell, a dev server, the
 * `sleep` in it — was started by the agent and is what keeps it running.
 */

/** Does this process belong to the agent started with `argv` (itself, a wrapper, or itself started again)? */
export function isAgentOwn(proc: Pick<TreeProcess, 'cmdline'>, argv: readonly string[]): boolean {
  const [command, ...args] = argv;
  if (command === undefined) return false;
  const { cmdline } = proc;
  const tail = cmdline.slice(cmdline.length - args.length);
  const endsWithArgs = cmdline.length > args.length && tail.every((arg, i) => arg === args[i]);
  if (!endsWithArgs) return false;
  if (args.length > 0) return true;
  // No arguments to tell it by: the last word must then name the command (a path to it, or its name).
  const last = cmdline[cmdline.length - 1] ?? '';
  return path.basename(last) === path.basename(command);
}

/** The processes under the run that are not the agent's own chain, with what runs below them, depth first. */
export function leftoversIn(tree: readonly TreeProcess[], argv: readonly string[]): TreeProcess[] {
  const out: TreeProcess[] = [];
  const holdsAgent = (p: TreeProcess): boolean => isAgentOwn(p, argv) || p.children.some(holdsAgent);
  const all = (p: TreeProcess): void => {
    out.push(p);
    p.children.forEach(all);
  };
  const visit = (p: TreeProcess): void => {
    if (!holdsAgent(p)) all(p);
    else p.children.forEach(visit);
  };
  tree.forEach(visit);
  return out;
}

/** `PID NAME`, as the warning names a process for people. */
export function describeProcess(p: Pick<TreeProcess, 'pid' | 'comm'>): string {
  return `${p.pid} ${p.comm}`;
}
