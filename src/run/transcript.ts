import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Store } from '../state/store.js';
import { listDir } from '../util/list-dir.js';
import { isInside } from '../util/paths.js';
import { codexSessionSince } from './agent-home.js';
import { RESUMABLE, type ResumableAgent } from './agents.js';
import { logDir } from './records.js';
import { parseTranscript, parseTranscriptLine, type TranscriptItem } from './transcript-parse.js';

/**
 * The conversation of a task's newest agent run, read from the transcript its CLI wrote in the
 * task's own state folder (agent-home.ts): which run, which file, and its items — for
 * `warren show` and the dashboard, which follows the file while the agent writes it.
 */

export interface Conversation {
  agent: ResumableAgent;
  runId: string;
  /** The session, when known (claude and gemini are given theirs up front; codex's is read after). */
  session: string | null;
  running: boolean;
  startedAt: string;
  /** The transcript file; null when the CLI has not written it (yet). */
  file: string | null;
}

interface AgentRunRow {
  id: string;
  label: string;
  argv: string;
  started_at: string;
  ended_at: string | null;
}

/** The task's newest agent run of an agent that keeps a transcript, and where that transcript is. */
export function newestConversation(store: Store, project: string, taskId: string): Conversation | null {
  const row = store.db
    .prepare(
      "SELECT id, label, argv, started_at, ended_at FROM runs WHERE project = ? AND task_id = ? AND kind = 'agent' ORDER BY started_at DESC, rowid DESC LIMIT 1",
    )
    .get(project, taskId) as AgentRunRow | undefined;
  if (!row || !(RESUMABLE as readonly string[]).includes(row.label)) return null;
  const agent = row.label as ResumableAgent;
  const home = path.join(logDir(store, project, taskId), 'agents', agent);
  const session = sessionOf(store, project, taskId, row, home);
  return {
    agent,
    runId: row.id,
    session,
    running: row.ended_at === null,
    startedAt: row.started_at,
    file: session === null ? null : transcriptFile(agent, home, session),
  };
}

/** The session named on the command line (`--session-id`/`--resume`), else the one recorded for the run, else codex's newest. */
function sessionOf(store: Store, project: string, taskId: string, row: AgentRunRow, home: string): string | null {
  let argv: unknown;
  try {
    argv = JSON.parse(row.argv);
  } catch {
    argv = [];
  }
  if (Array.isArray(argv)) {
    const at = argv.findIndex((a) => a === '--session-id' || a === '--resume');
    const named = at >= 0 ? argv[at + 1] : undefined;
    // codex's `resume ID` continues under a new id: only claude's and gemini's name the file.
    if (typeof named === 'string' && row.label !== 'codex') return named;
  }
  const recorded = store
    .taskEvents(project, taskId, 200)
    .findLast((e) => e.kind === 'agent.session' && e.data.runId === row.id);
  if (recorded?.kind === 'agent.session') return recorded.data.session;
  if (row.label === 'codex') return codexSessionSince(home, Date.parse(row.started_at) - 1000);
  return null;
}

/** Where `agent` wrote session `session` under its state folder `home`, or null. */
export function transcriptFile(agent: ResumableAgent, home: string, session: string): string | null {
  if (!/^[0-9a-f-]{8,64}$/i.test(session)) return null; // an id, never a path
  const found: string[] = [];
  if (agent === 'claude') {
    for (const dir of listDir(path.join(home, 'projects')))
      found.push(path.join(home, 'projects', dir, `${session}.jsonl`));
  } else if (agent === 'gemini') {
    // `session-<time>-<first 8 characters of the id>.jsonl`; the header line names the whole id.
    const tmp = path.join(home, '.gemini', 'tmp');
    for (const project of listDir(tmp)) {
      const chats = path.join(tmp, project, 'chats');
      for (const name of listDir(chats))
        if (name.startsWith('session-') && name.endsWith(`-${session.slice(0, 8)}.jsonl`))
          if (firstLine(path.join(chats, name)).includes(session)) found.push(path.join(chats, name));
    }
  } else {
    const walk = (dir: string, depth: number): void => {
      for (const name of listDir(dir)) {
        const p = path.join(dir, name);
        if (depth < 3) walk(p, depth + 1);
        else if (name.startsWith('rollout-') && name.endsWith(`-${session}.jsonl`)) found.push(p);
      }
    };
    walk(path.join(home, 'sessions'), 0);
  }
  return found.find((f) => regularInside(f, home)) ?? null;
}

/** A regular file whose real path is inside `root`: the folder is the agent's to write, links are not followed out of it. */
function regularInside(file: string, root: string): boolean {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && isInside(fs.realpathSync(root), fs.realpathSync(file));
  } catch {
    return false;
  }
}

function firstLine(file: string): string {
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const buf = Buffer.alloc(512);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** Every item of a transcript file (read whole: `warren show` and tests; the dashboard follows it with TranscriptReader). */
export function readTranscript(agent: ResumableAgent, file: string): TranscriptItem[] {
  return parseTranscript(agent, fs.readFileSync(file, 'utf8'));
}

/**
 * Reads a transcript as it grows: each call returns the items of the lines completed since the
 * last call (a line being written waits for its newline). An item written again comes back
 * with the key it had.
 */
export class TranscriptReader {
  private offset = 0;
  private line = 0;
  private partial = '';
  private decoder = new StringDecoder('utf8');

  constructor(
    private readonly agent: ResumableAgent,
    private readonly file: string,
  ) {}

  readNew(maxBytes = 4 * 1024 * 1024): TranscriptItem[] {
    const fd = fs.openSync(this.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const size = fs.fstatSync(fd).size;
      if (size < this.offset) {
        // Rewritten from the start: read it again.
        this.offset = 0;
        this.line = 0;
        this.partial = '';
        this.decoder = new StringDecoder('utf8');
      }
      const n = Math.min(size - this.offset, maxBytes);
      if (n <= 0) return [];
      const buf = Buffer.alloc(n);
      const got = fs.readSync(fd, buf, 0, n, this.offset);
      this.offset += got;
      const text = this.partial + this.decoder.write(buf.subarray(0, got));
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      const out: TranscriptItem[] = [];
      for (const l of lines) out.push(...parseTranscriptLine(this.agent, l, this.line++));
      return out;
    } finally {
      fs.closeSync(fd);
    }
  }
}
