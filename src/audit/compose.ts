import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * Pure reading of docker compose files: the bind mounts each service declares. Short syntax
 * (`.:/app`, `./src:/app/src:ro`) and long syntax (`{type: bind, source: ., target: /app}`).
 * Named volumes are not binds and are skipped.
 */
export interface ComposeBind {
  service: string;
  /** As written in the file. */
  source: string;
  /** Absolute, resolved against the compose file's folder; null when it uses ${VARIABLES} warren cannot resolve. */
  resolved: string | null;
  target: string;
  syntax: 'short' | 'long';
}

export const COMPOSE_FILE = /^(docker-)?compose(\.[A-Za-z0-9_.-]+)?\.ya?ml$/;

export function composeBinds(text: string, fileDir: string): ComposeBind[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return [];
  }
  const services = record(record(doc)?.['services']);
  if (!services) return [];
  const binds: ComposeBind[] = [];
  for (const [service, def] of Object.entries(services)) {
    const volumes = record(def)?.['volumes'];
    if (!Array.isArray(volumes)) continue;
    for (const volume of volumes as unknown[]) {
      const bind = typeof volume === 'string' ? shortBind(volume) : longBind(volume);
      if (bind) binds.push({ service, ...bind, resolved: resolveSource(bind.source, fileDir) });
    }
  }
  return binds;
}

function shortBind(spec: string): { source: string; target: string; syntax: 'short' } | null {
  const parts = spec.split(':');
  if (parts.length < 2) return null; // an anonymous volume: `/data`
  const [source = '', target = ''] = parts;
  if (!isPathLike(source)) return null; // a named volume: `db-data:/var/lib/...`
  return { source, target, syntax: 'short' };
}

function longBind(volume: unknown): { source: string; target: string; syntax: 'long' } | null {
  const v = record(volume);
  if (!v || v['type'] !== 'bind' || typeof v['source'] !== 'string') return null;
  return { source: v['source'], target: typeof v['target'] === 'string' ? v['target'] : '', syntax: 'long' };
}

function isPathLike(source: string): boolean {
  return source.startsWith('.') || source.startsWith('/') || source.startsWith('~') || source.startsWith('$');
}

function resolveSource(source: string, fileDir: string): string | null {
  if (source.includes('$')) return null;
  if (source === '~' || source.startsWith('~/')) return path.join(os.homedir(), source.slice(1));
  return path.resolve(fileDir, source);
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
