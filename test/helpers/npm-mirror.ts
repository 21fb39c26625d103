import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { tmpDir } from './repo.js';

/**
 * A fresh machine's npm registry, offline: every package warren needs at run time, packed from
 * this checkout's own node_modules (the versions package-lock.json pins), served on 127.0.0.1 as
 * a registry serves them (a packument per name, tarballs with their sha512), and better-sqlite3's
 * prebuilt binary where prebuild-install looks for it (`npm_config_better_sqlite3_binary_host`).
 * Point npm at it with `env`; `misses` lists what npm asked for that a real registry has and
 * this one has not.
 */
export interface NpmMirror {
  url: string;
  env: Record<string, string>;
  misses: string[];
  /** Optional peer dependencies of the mirrored packages (npm looks them up, and installs none). */
  optionalPeers: Set<string>;
}

interface LockEntry {
  version?: string;
  dev?: boolean;
  link?: boolean;
}

export async function startNpmMirror(checkout: string): Promise<NpmMirror> {
  const dir = tmpDir('warren-npm-mirror-');
  const lock = JSON.parse(fs.readFileSync(path.join(checkout, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const versions = new Map<string, Map<string, { manifest: Record<string, unknown>; file: string }>>();
  const optionalPeers = new Set<string>();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key.startsWith('node_modules/') || entry.dev || entry.link) continue;
    const src = path.join(checkout, key);
    const manifest = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8')) as Record<string, unknown>;
    const name = String(manifest.name);
    const peersMeta = (manifest.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    for (const [peer, meta] of Object.entries(peersMeta)) if (meta.optional) optionalPeers.add(peer);
    const version = String(manifest.version);
    const file = `${name.replace('/', '__')}-${version}.tgz`;
    if (!versions.get(name)?.has(version)) {
      // What the registry's tarball holds: the package, not what was installed or built below it.
      execFileSync('tar', [
        '-czf',
        path.join(dir, file),
        '--exclude=./node_modules',
        '--exclude=./build',
        '-C',
        src,
        '--transform=s,^\\.,package,',
        '.',
      ]);
      versions.set(name, (versions.get(name) ?? new Map()).set(version, { manifest, file }));
    }
  }
  const sqlite = JSON.parse(
    fs.readFileSync(path.join(checkout, 'node_modules/better-sqlite3/package.json'), 'utf8'),
  ) as { version: string };
  const prebuilt = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', [
    '-czf',
    path.join(dir, prebuilt),
    '-C',
    path.join(checkout, 'node_modules/better-sqlite3'),
    'build/Release/better_sqlite3.node',
  ]);

  const misses: string[] = [];
  let base = '';
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '').split('?')[0] ?? '');
    const send = (status: number, body: Buffer | string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (url.startsWith('/-/tarballs/')) {
      const file = path.join(dir, path.basename(url));
      if (fs.existsSync(file)) return send(200, fs.readFileSync(file), 'application/octet-stream');
    } else if (url === `/prebuilds/v${sqlite.version}/${prebuilt}`) {
      return send(200, fs.readFileSync(path.join(dir, prebuilt)), 'application/octet-stream');
    } else {
      const name = url.slice(1);
      const known = versions.get(name);
      if (known) {
        const all = Object.fromEntries(
          [...known].map(([version, { manifest, file }]) => {
            const bytes = fs.readFileSync(path.join(dir, file));
            const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
            return [version, { ...manifest, dist: { tarball: `${base}/-/tarballs/${file}`, integrity } }];
          }),
        );
        const latest = [...known.keys()].sort().at(-1) ?? '';
        return send(200, JSON.stringify({ name, 'dist-tags': { latest }, versions: all }));
      }
    }
    misses.push(`${req.method} ${url}`);
    send(404, '{"error":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: base,
    misses,
    optionalPeers,
    env: {
      npm_config_registry: `${base}/`,
      npm_config_better_sqlite3_binary_host: `${base}/prebuilds`,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    },
  };
}
