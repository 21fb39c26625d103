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
