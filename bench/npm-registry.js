// A registry on 127.0.0.1 that serves, offline, the packages of an npm lockfile from npm's own
// cache (a content-addressed `_cacache`, filled by `npm ci`): a packument per name with every
// version the lockfile has (its dependencies, os/cpu and bin as the lockfile records them), and
// each tarball by its integrity. What pnpm needs to resolve and fetch a tree that npm installed,
// with no network (bench/realworld.js's vue shape). Prints its URL, then serves until killed.
//
//   node bench/npm-registry.js LOCKFILE CACHE_DIR
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [lockfile, cache] = process.argv.slice(2);
const lock = JSON.parse(fs.readFileSync(lockfile, 'utf8'));

/** The file of `_cacache` that holds the content of this integrity, or null. */
function cached(integrity) {
  const [algorithm, digest] = (integrity?.split(' ')[0] ?? '').split('-');
  if (!algorithm || !digest) return null;
  const hex = Buffer.from(digest, 'base64').toString('hex');
  const file = path.join(cache, '_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return fs.existsSync(file) ? file : null;
}

const packuments = new Map(); // name → packument
const tarballs = new Map(); // "name/-/file.tgz" → cache file
let port = 0;
const FIELDS = [
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'os',
  'cpu',
  'bin',
  'engines',
];
for (const [where, entry] of Object.entries(lock.packages ?? {})) {
  if (where === '' || entry.link || !entry.version) continue;
  const name = entry.name ?? where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const file = cached(entry.integrity);
  if (file === null) continue; // another platform's optional package: npm never fetched it
  const tail = `${name.split('/').pop()}-${entry.version}.tgz`;
  tarballs.set(`${name}/-/${tail}`, file);
  const doc = packuments.get(name) ?? { name, versions: {}, 'dist-tags': {} };
  const version = { name, version: entry.version };
  for (const f of FIELDS) if (entry[f] !== undefined) version[f] = entry[f];
  version.dist = { integrity: entry.integrity, tarball: `/${name}/-/${tail}` };
  doc.versions[entry.version] = version;
  packuments.set(name, doc);
}
for (const doc of packuments.values()) {
  const versions = Object.keys(doc.versions).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  doc['dist-tags'].latest = versions[versions.length - 1];
}

const server = http.createServer((req, res) => {
  const url = decodeURIComponent((req.url ?? '/').split('?')[0]).replace(/^\//, '');
  const file = tarballs.get(url);
  if (file) {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
    return;
  }
  const doc = packuments.get(url);
  if (!doc) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
    return;
  }
  const base = `http://127.0.0.1:${port}`;
  const versions = Object.fromEntries(
    Object.entries(doc.versions).map(([v, d]) => [v, { ...d, dist: { ...d.dist, tarball: base + d.dist.tarball } }]),
  );
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ...doc, versions }));
});
server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  process.stdout.write(`http://127.0.0.1:${port}/\n`);
});
