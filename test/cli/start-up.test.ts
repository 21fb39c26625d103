import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What every command loads before it starts: the bundle's entry and the chunks it imports
 * statically (scripts/bundle.js). The validators (zod: ~850 kB, ~60 ms of every start-up on this
 * machine) and the cluster client load only when a command needs them: a static import that
 * pulls one in again fails here, with the chunk that does it.
 */
const BUNDLE = path.resolve(import.meta.dirname, '../../dist/bundle');

function eagerChunks(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = fs.readFileSync(path.join(BUNDLE, file), 'utf8');
    // Static imports only (`import{…}from"./x.js"`, `import"./x.js"`); `import("./x.js")` is lazy.
    for (const m of text.matchAll(
      /import(?:\s*\{[^}]*\}\s*from|\s*\*\s*as\s+\w+\s+from|\s+\w+\s+from)?\s*"\.\/([^"]+\.js)"/g,
    ))
      queue.push(m[1] as string);
  }
  return [...seen];
}

describe('start-up', () => {
  it('loads neither zod nor the Kubernetes client for a command that does not use them', () => {
    const chunks = eagerChunks('bin.js');
    expect(chunks.length).toBeGreaterThan(1);
    const offenders = chunks.filter((c) => {
      const text = fs.readFileSync(path.join(BUNDLE, c), 'utf8');
      return text.includes('ZodType') || text.includes('KubeConfig');
    });
    expect(offenders).toEqual([]);
  });
});
