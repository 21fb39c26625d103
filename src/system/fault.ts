/**
 * The fault-injection seam, for the crash tests: `WARREN_FAULT=<op>:<step>` (e.g.
 * `land:checkout-moved`) makes warren kill itself with SIGKILL the moment that operation reaches
 * that step — no cleanup, no `finally`, exactly like a power cut or `kill -9`. `<op>:<step>:SIGINT`
 * sends itself SIGINT there instead: a ctrl-c at that moment; `<op>:<step>:SIGSTOP` stops itself
 * there, for a test to do something at that moment (cut a connection) and then continue it. Every named step
 * of every mutating command is one (each operation's declaration names them: src/workspace/operation.ts), and
 * test/crash.test.ts kills at each in turn. Unset, it costs one string compare per step.
 */
export const FAULT_ENV = 'WARREN_FAULT';

export function faultPoint(op: string, step: string): void {
  const wanted = process.env[FAULT_ENV];
  if (wanted === undefined) return;
  if (wanted === `${op}:${step}`) process.kill(process.pid, 'SIGKILL');
  else if (wanted === `${op}:${step}:SIGINT`) process.kill(process.pid, 'SIGINT');
  else if (wanted === `${op}:${step}:SIGSTOP`) process.kill(process.pid, 'SIGSTOP');
}

/**
 * faultPoint for a caller that can wait (an operation between two steps): a SIGINT it sends is
 * handled — the command's own ctrl-c listener has run — before the caller goes on, as a real
 * ctrl-c that came between the two steps would be. Without the wait, a step that happens to do
 * no I/O (nothing to wait for, so the signal's turn of the event loop never comes) would run
 * past it: a ctrl-c test would depend on which step spawns a process. With no listener, SIGINT
 * ends the process, as before.
 */
export async function faultPointHandled(op: string, step: string): Promise<void> {
  if (process.env[FAULT_ENV] === `${op}:${step}:SIGINT` && process.listenerCount('SIGINT') > 0) {
    // A signal's watcher holds no event loop open: a timer does, until the signal's turn came.
    const open = setInterval(() => undefined, 1000);
    const handled = new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    process.kill(process.pid, 'SIGINT');
    await handled.finally(() => clearInterval(open));
    return;
  }
  faultPoint(op, step);
}
