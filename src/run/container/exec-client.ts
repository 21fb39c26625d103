import http from 'node:http';
import type { Duplex } from 'node:stream';
import { API, apiError, apiRequest } from './api.js';

export interface ExecSpec {
  socket: string;
  container: string;
  cwd: string;
  env: string[];
  argv: string[];
}

/** Where the exec's streams come from and go (the exec client's own, src/cli/container-exec.ts). */
export interface ExecIo {
  stdin: NodeJS.ReadableStream;
  stdout: (chunk: Buffer) => void;
  stderr: (chunk: Buffer) => void;
  /** Called once attached, with what ends the exec from here (the init inside then ends the run). */
  attached: (end: () => void) => void;
}

/**
 * One exec in a running container, attached: standard input in frames (bin/container-init.mjs
 * reads them; the end of the connection is the end of the run), stdout and stderr demultiplexed
 * from Docker's 8-byte frame headers. Resolves with the exec's exit status.
 */
export async function execInContainer(spec: ExecSpec, io: ExecIo): Promise<number> {
  const made = await apiRequest(spec.socket, 'POST', `${API}/containers/${encodeURIComponent(spec.container)}/exec`, {
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Cmd: spec.argv,
    Env: spec.env,
    WorkingDir: spec.cwd,
  });
  if (made.status !== 201) throw new Error(`exec in ${spec.container}: ${apiError(made)}`);
  const id = (made.body as { Id: string }).Id;
  const connection = await attach(spec.socket, id);
  const ended = new Promise<void>((resolve) => {
    connection.on('close', () => resolve());
    connection.on('end', () => resolve());
  });
  io.attached(() => connection.destroy());
  forwardInput(connection, io.stdin);
  demultiplex(connection, io);
  await ended;
  const inspected = await apiRequest(spec.socket, 'GET', `${API}/exec/${id}/json`);
  const code = (inspected.body as { ExitCode?: unknown } | null)?.ExitCode;
  return typeof code === 'number' ? code : 125;
}

function attach(socket: string, id: string): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      socketPath: socket,
      method: 'POST',
      path: `${API}/exec/${id}/start`,
      headers: { 'Content-Type': 'application/json', Connection: 'Upgrade', Upgrade: 'tcp' },
    });
    req.on('upgrade', (_res, connection: Duplex, head: Buffer) => {
      if (head.length > 0) connection.unshift(head);
      resolve(connection);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(new Error(`exec start: HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString()}`)));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ Detach: false, Tty: false }));
  });
}

function frame(data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length, 0);
  return Buffer.concat([head, data]);
}

function forwardInput(connection: Duplex, stdin: NodeJS.ReadableStream): void {
  connection.on('error', () => {});
  stdin.on('data', (chunk: Buffer) => connection.write(frame(chunk)));
  stdin.on('end', () => connection.write(frame(Buffer.alloc(0))));
  stdin.on('error', () => connection.write(frame(Buffer.alloc(0))));
}

function demultiplex(connection: Duplex, io: ExecIo): void {
  let pending = Buffer.alloc(0);
  connection.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const length = pending.readUInt32BE(4);
      if (pending.length < 8 + length) break;
      (pending[0] === 2 ? io.stderr : io.stdout)(pending.subarray(8, 8 + length));
      pending = pending.subarray(8 + length);
    }
  });
}
