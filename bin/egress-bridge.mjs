#!/usr/bin/env node
// The first process inside a bwrap sandbox without a network of its own (src/run/sandbox.ts's
// BridgeSpec). A program of its own, not library code — it runs inside the sandbox, where the
// network is a loopback only — so it uses Node's built-ins and nothing else:
//
//   node egress-bridge.mjs SOCKET|- FORWARDS|- [--ingress PORT] -- CMD [ARG...]
//
// Out: it listens on the sandbox's own loopback and carries every connection over SOCKET
// (warren's egress proxy, bound in from outside). FORWARDS (`127.0.0.1:8080,::1:9000`, or `-`
// for none) are allowed loopback ports, tunnelled as they are (CONNECT host:port) so that a
// client that does not proxy loopback still reaches them; CMD gets HTTP(S)_PROXY and ALL_PROXY
// pointing at the listener. `-` for SOCKET: no way out at all.
// In (`--ingress PORT`, a service): connections accepted on the host (src/run/service-host.ts)
// arrive as sockets over the IPC channel this process inherits, and are carried to PORT on the
// sandbox's loopback; `ready` is sent once PORT accepts, so the host listens only then.
// It runs CMD, hands signals on, and exits with CMD's status.
import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { setTimeout } from 'node:timers';

const args = process.argv.slice(2);
const [socketPath, forwardList] = args;
let rest = args.slice(2);
let ingressPort = null;
if (rest[0] === '--ingress') {
  ingressPort = Number(rest[1]);
  rest = rest.slice(2);
}
const [dashes, ...command] = rest;
if (
  !socketPath ||
  forwardList === undefined ||
  dashes !== '--' ||
  command.length === 0 ||
  (ingressPort !== null && !(ingressPort > 0 && ingressPort < 65536))
) {
  process.stderr.write('usage: egress-bridge SOCKET|- FORWARDS|- [--ingress PORT] -- CMD [ARG...]\n');
  process.exit(125);
}

function pipeBoth(a, b) {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

// The proxy listener: bytes as they are, both ways; the proxy outside reads the request.
const proxy = net.createServer((client) => pipeBoth(client, net.connect(socketPath)));

// A loopback forward: CONNECT through the proxy (which checks it like any other), then bytes as they are.
function forward(host, port) {
  return net.createServer((client) => {
    client.pause();
    const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const up = net.connect(socketPath, () => up.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`));
    let reply = Buffer.alloc(0);
    const onData = (chunk) => {
      reply = Buffer.concat([reply, chunk]);
      const end = reply.indexOf('\r\n\r\n');
      if (end === -1) return;
      up.off('data', onData);
      if (!/^HTTP\/1\.[01] 200/.test(reply.toString('latin1'))) {
        client.destroy();
        up.destroy();
        return;
      }
      const rest = reply.subarray(end + 4);
      if (rest.length > 0) client.write(rest);
      pipeBoth(client, up);
      client.resume();
    };
    up.on('data', onData);
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address().port));
  });
}

// In: each socket the host hands over is carried to the service's port inside; `ready` once that port accepts.
function ingress(port) {
  const channel = process.channel ? process : null;
  if (!channel) {
    process.stderr.write('warren: the sandbox bridge has no channel to the host for its ingress\n');
    return;
  }
  // The host's word is taken for nothing but a socket: anything else on the channel is dropped.
  channel.on('message', (message, socket) => {
    if (message !== 'connection' || !(socket instanceof net.Socket)) return;
    const up = net.connect(port, '127.0.0.1');
    pipeBoth(socket, up);
    socket.resume();
  });
  const probe = () => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      channel.send('ready');
    });
    s.once('error', () => setTimeout(probe, 100));
  };
  probe();
}

async function main() {
  const env = { ...process.env };
  if (socketPath !== '-') {
    const port = await listen(proxy, 0, '127.0.0.1');
    for (const entry of forwardList === '-' ? [] : forwardList.split(',')) {
      const at = entry.lastIndexOf(':');
      const forwardPort = Number(entry.slice(at + 1));
      await listen(forward(entry.slice(0, at), forwardPort), forwardPort, entry.slice(0, at));
    }
    const url = `http://127.0.0.1:${port}`;
    env.WARREN_EGRESS_PROXY = url;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
      env[name] = url;
      env[name.toLowerCase()] = url;
    }
    // The sandbox's own loopback stays its own (a dev server on $WARREN_PORT); allowed loopback ports are forwarded above.
    env.NO_PROXY = env.no_proxy = 'localhost,127.0.0.1,::1';
  }
  if (ingressPort !== null) ingress(ingressPort);
  // The command gets no channel: its stdio is the bridge's, and nothing else is inherited.
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (err) => {
    process.stderr.write(`warren: ${command[0]}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)));
}

main().catch((err) => {
  process.stderr.write(`warren: the sandbox's bridge could not start: ${err.message}\n`);
  process.exit(125);
});
