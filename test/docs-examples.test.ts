import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_REFERENCE } from '../src/cli/reference.js';
import { fullTierOnly } from './helpers/tier.js';

/**
 * The command reference's `--json` examples and shapes against real runs: scripts/doc-examples.js
 * runs every command in a throwaway repository (the runs the examples were pasted from), and
 * each documented `--json` example must have the keys the real answer has, at every depth, and
 * every key the real answer has must be named in the command's `json:` shape. Paths, hashes
 * and times differ per run; a field added, renamed or dropped does not.
 */

const ROOT = path.resolve(import.meta.dirname, '..');

/** Examples the script does not run, each with why. */
const NOT_RUN: Readonly<Record<string, string>> = {
  'sync tax': 'needs a base moved under a task with a conflict, a scenario of its own (test/conflicts/)',
  'hooks install claude': 'writes into a Claude Code settings file of the scenario for agents',
  'run cart --agent claude --prompt "Add a cart, then show where you are."':
    'the real claude against a scripted model server',
};

interface Run {
  args: string;
  /** The document, or null when the example shows only its start (`…`). */
  json: unknown;
}

/** Every `$ warren --json ARGS` of a transcript, with the JSON document it printed (after any stderr lines). */
function jsonRuns(transcript: string): Run[] {
  const runs: Run[] = [];
  const lines = transcript.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^\$ warren --json (.*?)(?:\s+#.*)?$/.exec(lines[i] ?? '');
    if (!m?.[1]) continue;
    const end = lines.findIndex((l, j) => j > i && /^\[exit \d+\]$/.test(l));
    const body = lines.slice(i + 1, end);
    const start = body.findIndex((l) => /^[[{]/.test(l));
    if (start === -1) continue;
    // Pretty-printed: the document ends at the first bracket back at the start of a line (or is one line).
    const close = body.findIndex(
      (l, j) => j >= start && (/^[\]}]$/.test(l) || (j === start && /^(\[\]|\{\}|\S.*[\]}])$/.test(l))),
    );
    let json: unknown = null;
    try {
      json = JSON.parse(body.slice(start, close + 1).join('\n'));
    } catch {
      // an example cut short: it is checked only if it is one the script runs (then it fails below)
    }
    runs.push({ args: m[1], json });
  }
  return runs;
}

/** The keys at every depth (an array by its first element; a value by whether it holds keys). */
function keys(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? [] : [keys(v[0])];
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, keys(x)]),
    );
  return '·';
}

/** Where two key trees differ; an empty array on either side says nothing of its elements. */
function differences(doc: unknown, real: unknown, at = '$'): string[] {
  if (Array.isArray(doc) && Array.isArray(real))
    return doc.length === 0 || real.length === 0 ? [] : differences(doc[0], real[0], `${at}[0]`);
  if (doc !== null && typeof doc === 'object' && real !== null && typeof real === 'object' && !Array.isArray(doc)) {
    const d = doc as Record<string, unknown>;
    const r = real as Record<string, unknown>;
    return [
      ...Object.keys(r)
        .filter((k) => !(k in d))
        .map((k) => `${at}.${k}: in the real answer, not in the example`),
      ...Object.keys(d)
        .filter((k) => !(k in r))
        .map((k) => `${at}.${k}: in the example, not in the real answer`),
      ...Object.keys(d)
        .filter((k) => k in r)
        .flatMap((k) => differences(d[k], r[k], `${at}.${k}`)),
    ];
  }
  return JSON.stringify(doc) === JSON.stringify(real)
    ? []
    : [`${at}: ${JSON.stringify(doc)} vs ${JSON.stringify(real)}`];
}

/** The reference entry of `args`' command (`policy verify`, else `land`). */
function commandOf(args: string): string | undefined {
  const [a, b] = args.split(' ');
  return [`${a} ${b}`, a].find((name) => name !== undefined && name in COMMAND_REFERENCE);
}

describe.skipIf(fullTierOnly(import.meta.filename, 'the docs examples, run again (minutes)'))(
  'the command reference against real runs',
  () => {
    it(
      'every documented --json example has the keys its real run has, and the json shape names them',
      { timeout: 900_000 },
      () => {
        const ran = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'doc-examples.js')], {
          cwd: ROOT,
          encoding: 'utf8',
          maxBuffer: 64 * 1024 * 1024,
        });
        expect(ran.status, ran.stderr).toBe(0);
        const real = new Map(jsonRuns(ran.stdout).map((r) => [r.args, r.json]));
        const documented = Object.values(COMMAND_REFERENCE).flatMap((ref) => jsonRuns(ref.example));
        expect(documented.length).toBeGreaterThan(20);

        const notRun: string[] = [];
        const drift: string[] = [];
        for (const doc of documented) {
          if (!real.has(doc.args)) {
            notRun.push(doc.args);
            continue;
          }
          const answer = real.get(doc.args);
          if (doc.json === null) drift.push(`warren --json ${doc.args}: the example is cut short; paste the whole run`);
          for (const d of differences(keys(doc.json), keys(answer))) drift.push(`warren --json ${doc.args}: ${d}`);
          // Every key of the real answer (an array's by its first element) is named in the shape.
          const command = commandOf(doc.args);
          const shape = command === undefined ? '' : (COMMAND_REFERENCE[command]?.json ?? '');
          const top = Array.isArray(answer) ? answer[0] : answer;
          // A refusal's document is every command's (docs/errors.md), not this one's shape.
          const named = top !== null && typeof top === 'object' && !('error' in top) ? Object.keys(top) : [];
          for (const k of named)
            if (!new RegExp(`\\b${k}\\??\\s*[:;,}]`).test(shape)) drift.push(`${command} json shape: no ${k}`);
        }
        expect(drift).toEqual([]);
        expect(notRun.sort()).toEqual(Object.keys(NOT_RUN).sort());
      },
    );
  },
);
