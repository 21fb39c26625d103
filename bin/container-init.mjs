#!/usr/bin/env node
// What every command of a task in a cluster (`runner: k8s:NAME`, src/run/k8s/) runs under, in
// its pod: src/cli/k8s-exec.ts passes this file's source to the pod's node as
// `node -e INIT RUN_ID -- CMD…`. A `sandbox: container` task's commands run under
// bin/container-init.pl instead, which does the same in perl (it starts in a tenth of node's
// time); a pod's image may have node and no perl. It is the run's process-tree keeper there, as
// the PID namespace is outside:
//
// - the command leads a process group and a session of its own, and carries WARREN_RUN_ID;
// - its standard input arrives in frames (4-byte length, then bytes; length 0: end of input),
//   so that the end of the connection itself — the client ended, killed or cut off — is told
//   apart from the end of the input, and ends the run;
// - when the command exits, or the connection ends, everything of the run is killed: its group,
//   every process carrying its WARREN_RUN_ID, and every process left to the container's init
//   that carries no run's mark at all (it cleared its environment to escape). A process of
//   another, live run keeps its mark and is left alone.
//
// Plain JavaScript with no dependency: it runs with the pod's node, in an image that has
// nothing of warren's but this file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

const args = process.argv.slice(2);
const runId = args.shift();
const [sep, ...argv] = args;
if (!runId || sep !== '--' || argv.length === 0) {
  process.stderr.write('usage: container-init.mjs RUN_ID -- CMD [ARG…]\n');
  process.exit(125);
}
const MARK = `WARREN_RUN_ID=${runId}`;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

const child = spawn(argv[0], argv.slice(1), {
  stdio: ['pipe', 'inherit', 'inherit'],
  detached: true,
  env: { ...process.env, WARREN_RUN_ID: runId },
});
child.stdin.on('error', () => {});

let ended = false;
let pending = Buffer.alloc(0);
let inputClosed = false;
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4) {
    const length = pending.readUInt32BE(0);
    if (pending.length < 4 + length) break;
    const data = pending.subarray(4, 4 + length);
    pending = pending.subarray(4 + length);
    if (inputClosed) continue;
    if (length === 0) {
      inputClosed = true;
      child.stdin.end();
    } else child.stdin.write(data);
  }
});
// The connection is gone: the client was ended (a timeout, a cancel) or cut off. So is the run.
process.stdin.on('end', () => finish(137));
process.stdin.on('error', () => finish(137));

child.on('error', (err) => {
  process.stderr.write(`warren: ${argv[0]}: ${err.code === 'ENOENT' ? 'command not found' : err.message}\n`);
  finish(127);
});
child.on('exit', (code, signal) => {
  finish(signal ? 128 + (signalNumber(signal) ?? 9) : (code ?? 1));
});

function signalNumber(name) {
  const table = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return table[name];
}

function finish(status) {
  if (ended) return;
  ended = true;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  // Again until a pass finds nothing to kill: a doomed process may fork between a pass's read
  // of /proc and its kill. When one finds none, what is left belongs to other, live runs.
  for (let pass = 0; pass < 100 && sweep() > 0; pass++) Atomics.wait(PAUSE, 0, 0, 10);
  process.exit(status);
}

/**
 * Kills what belongs to this run, and what escaped every run's mark, in the container's PID
 * namespace: walking up from each process, the first marked one decides (ours: killed; another
 * live run's: left); a chain that reaches the container's init unmarked escaped (killed).
 */
function sweep() {
  let killed = 0;
  const table = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const mark = environ.find((v) => v.startsWith('WARREN_RUN_ID=')) ?? null;
      table.set(pid, { ppid: Number(ppid), mark, zombie: state === 'Z' });
    } catch {
      // gone, or not ours to read
    }
  }
  const doomed = (pid) => {
    for (let p = pid, hops = 0; hops < 4096; hops++) {
      if (p === 1 || p === 0) return true; // reached the init unmarked: escaped
      if (p === process.pid) return true; // below this init: the run's own
      const row = table.get(p);
      if (!row) return true; // its parent is gone already: an orphan on its way to the init
      if (row.mark !== null) return row.mark === MARK;
      p = row.ppid;
    }
    return false;
  };
  for (const pid of table.keys()) {
    if (pid === 1 || pid === process.pid || table.get(pid).zombie || !doomed(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}
