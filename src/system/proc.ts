import fs from 'node:fs';

/**
 * Read-only views of /proc (Linux). The supervisor uses them to find every process of a run
 * by its PID namespace, and the audit to find a task's processes and their listening sockets.
 */

export function hasProc(): boolean {
  return fs.existsSync('/proc/self/ns/pid');
}

/** The inode of a process's PID namespace, or null when it is gone. */
export function pidNamespaceOf(pid: number): number | null {
  try {
    return fs.statSync(`/proc/${pid}/ns/pid`).ino;
  } catch {
    return null;
  }
}

export function listPids(): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (/^\d+$/.test(name)) pids.push(Number(name));
  }
  return pids;
}

/** Every live process in the PID namespace `ino` (as seen from ours). */
export function pidsInNamespace(ino: number): number[] {
  return listPids().filter((pid) => pidNamespaceOf(pid) === ino && !isZombie(pid));
}

/** Direct children of `pid`, from every thread's children list. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text !== '') out.push(...text.split(/\s+/).map(Number));
    } catch {
      // thread gone
    }
  }
  return out;
}

/** True while `pid` exists and is not a zombie (a zombie runs nothing; its parent reaps it). */
export function isAlive(pid: number): boolean {
  try {
    return !isZombie(pid) && fs.existsSync(`/proc/${pid}`);
  } catch {
    return false;
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the last ")" (the command name may contain one).
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/** The NUL-separated environment of a process, as a map; empty when unreadable. */
export function environOf(pid: number): Map<string, string> {
  const env = new Map<string, string>();
  let raw: string;
  try {
    raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return env;
  }
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}

/** Socket inodes a process holds open (from its fd links `socket:[N]`). */
export function socketInodesOf(pid: number): Set<number> {
  const inodes = new Set<number>();
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(Number(m[1]));
    } catch {
      // fd closed meanwhile
    }
  }
  return inodes;
}

export interface ListeningSocket {
  inode: number;
  address: string;
  port: number;
}

/**
 * Parses /proc/net/tcp or tcp6 text: the sockets in LISTEN state (st 0A). Pure.
 * Lines look like `0: 0100007F:1F90 00000000:0000 0A ... uid timeout inode`.
 */
export function parseProcNetTcp(text: string): ListeningSocket[] {
  const out: ListeningSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || cols[3] !== '0A') continue;
    const [addrHex, portHex] = (cols[1] ?? '').split(':');
    if (!addrHex || !portHex) continue;
    out.push({ inode: Number(cols[9]), address: decodeAddress(addrHex), port: Number.parseInt(portHex, 16) });
  }
  return out;
}

function decodeAddress(hex: string): string {
  if (hex.length === 8) {
    // IPv4, stored as a little-endian 32-bit word.
    const bytes = hex.match(/../g) ?? [];
    return bytes
      .map((b) => Number.parseInt(b, 16))
      .reverse()
      .join('.');
  }
  if (/^0+$/.test(hex)) return '::';
  if (hex === '00000000000000000000000001000000') return '::1';
  return `ipv6:${hex}`;
}

/** Listening TCP sockets in the network namespace `pid` lives in. */
export function listeningSocketsSeenBy(pid: number): ListeningSocket[] {
  const out: ListeningSocket[] = [];
  for (const file of ['tcp', 'tcp6']) {
    try {
      out.push(...parseProcNetTcp(fs.readFileSync(`/proc/${pid}/net/${file}`, 'utf8')));
    } catch {
      // no IPv6, or the process is gone
    }
  }
  return out;
}

/** A process under a root, with what tells one process from another: its name and command line. */
export interface TreeProcess {
  pid: number;
  /** The kernel's name for it (/proc/PID/comm: at most 15 characters). */
  comm: string;
  /** Its arguments (/proc/PID/cmdline); empty when unreadable (gone, or a kernel thread). */
  cmdline: string[];
  children: TreeProcess[];
}

/** Every process under `root` (not itself), as a tree; a process gone meanwhile is left out or kept with what was read. */
export function processTree(root: number, depth = 20): TreeProcess[] {
  return childrenOf(root).map((pid) => ({
    pid,
    comm: commOf(pid),
    cmdline: cmdlineOf(pid),
    children: depth > 0 ? processTree(pid, depth - 1) : [],
  }));
}

export function commOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

function cmdlineOf(pid: number): string[] {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // NUL-terminated arguments: the last split element is the empty string after the final NUL.
    return raw === '' ? [] : raw.replace(/\0$/, '').split('\0');
  } catch {
    return [];
  }
}
