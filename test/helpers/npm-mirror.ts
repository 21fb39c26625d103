import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { tmpDir } from './repo.js';

/**
 * A fresh machine's npm registry, offline: every package warren needs at run time (and, with
 * `dev`, every package `npm ci` in a clone installs), packed from this checkout's own
 * node_modules (the versions package-lock.json pins), served on 127.0.0.1 as a registry serves
 * them (a packument per name, tarballs with their sha512), and better-sqlite3's prebuilt binary
 * where prebuild-install looks for it (`npm_config_better_sqlite3_binary_host`); with
 * `prebuilt: false` that address answers 404, as on a machine that cannot reach the binary's
 * host, and better-sqlite3 compiles. Point npm at it with `env`; `misses` lists what npm asked
 * for that a real registry has and this one has not.
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
  integrity?: string;
  dev?: boolean;
  link?: boolean;
}

export interface MirrorOptions {
  /** The devDependencies too: what `npm ci` in a clone of the checkout installs. */
  dev?: boolean;
  /** better-sqlite3's prebuilt binary for this Node (default true); false: 404, and it compiles. */
  prebuilt?: boolean;
}

/** npm's cache folder (`npm config get cache`). */
function npmCache(): string {
  return process.env.npm_config_cache ?? execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
}

/** The file of npm's content-addressed cache that holds the tarball of this integrity, if it is there. */
function cachedTarball(cache: string, integrity: string | undefined): string | null {
  const [algorithm, digest] = (integrity?.split(' ')[0] ?? '').split('-');
  if (!algorithm || !digest) return null;
  const hex = Buffer.from(digest, 'base64').toString('hex');
  const file = path.join(cache, '_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return fs.existsSync(file) ? file : null;
}

export async function startNpmMirror(checkout: string, options: MirrorOptions = {}): Promise<NpmMirror> {
  const dir = tmpDir('warren-npm-mirror-');
  const lock = JSON.parse(fs.readFileSync(path.join(checkout, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const versions = new Map<string, Map<string, { manifest: Record<string, unknown>; file: string }>>();
  const optionalPeers = new Set<string>();
  const cache = npmCache();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key.startsWith('node_modules/') || (entry.dev && !options.dev) || entry.link) continue;
    const src = path.join(checkout, key);
    // An optional package for another platform: npm does not ask for it, and this machine has none.
    if (!fs.existsSync(src)) continue;
    const manifest = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8')) as Record<string, unknown>;
    const name = String(manifest.name);
    const peersMeta = (manifest.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    for (const [peer, meta] of Object.entries(peersMeta)) if (meta.optional) optionalPeers.add(peer);
    const version = String(manifest.version);
    const file = `${name.replace('/', '__')}-${version}.tgz`;
    const fetched = cachedTarball(cache, entry.integrity);
    if (versions.get(name)?.has(version)) continue;
    // The registry's own tarball where npm's cache holds it (what the lockfile's integrity names:
    // `npm ci` checks it), else what it holds: the package, not what was installed or built below it.
    if (fetched) fs.copyFileSync(fetched, path.join(dir, file));
    else
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
    } else if (url === `/prebuilds/v${sqlite.version}/${prebuilt}` && options.prebuilt !== false) {
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
