// The tests' loopback Kubernetes API server (test/helpers/k8s-server.ts) for benchmarks, which run
// warren synchronously: built from its TypeScript and run as a process of its own.
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.js';

/** The tests' loopback API server, built from its TypeScript and run as a process of its own (warren is run synchronously here). */
export async function startServer(dir) {
  fs.mkdirSync(dir, { recursive: true });
  // Two folders below the package, as test/helpers/ is: its packages resolve, and so do the CRDs.
  const entry = path.join(ROOT, '.bench-cache', `k8s-${process.pid}`, 'server.mjs');
  await build({
    stdin: {
      contents: `import { startK8sServer } from './test/helpers/k8s-server.ts';
const s = await startK8sServer(process.argv[2]);
console.log(s.kubeconfig);
process.on('SIGTERM', async () => { await s.close(); process.exit(0); });`,
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: entry,
    logLevel: 'warning',
  });
  const child = spawn(process.execPath, [entry, dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const kubeconfig = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(d.toString().trim())));
  fs.rmSync(path.dirname(entry), { recursive: true, force: true }); // loaded: nothing of it is left behind
  return {
    kubeconfig,
    close: () => new Promise((resolve) => (child.on('close', resolve), child.kill('SIGTERM'))),
  };
}
