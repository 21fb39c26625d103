import type { ResumableAgent } from './agents.js';

/**
 * Pure readers of the conversations the agent CLIs record, one JSON object a line, into one
 * shape: the prompts, the agent's text, its tool calls and their results. What each CLI writes
 * was read off the real CLIs run against the scripted model server (test/run/transcript.test.ts):
 * - claude: `projects/<cwd>/<session>.jsonl`, `user`/`assistant` lines whose `message.content`
 *   holds text, `tool_use` and `tool_result` blocks, among bookkeeping lines (attachments,
 *   request shapes, costs) that are not the conversation;
 * - codex: `sessions/…/rollout-…-<session>.jsonl`, `response_item` lines (messages,
 *   `custom_tool_call`/`function_call` and their outputs) and `event_msg` lines (the user's
 *   message as `item_completed` `UserMessage`, or `user_message` in older versions);
 * - gemini: `.gemini/tmp/<project>/chats/session-…jsonl`, `user`/`gemini` messages, a message
 *   written again under the same id once its tool calls have results (`toolCalls[].result`).
 * Each item has a `key`: an item written again (gemini) has the key it had, so a reader that
 * follows the file replaces it instead of showing it twice.
 */

export type TranscriptItem =
  | { key: string; kind: 'prompt'; at: string | null; text: string }
  | { key: string; kind: 'text'; at: string | null; text: string }
  | { key: string; kind: 'tool'; at: string | null; callId: string; name: string; input: string }
  | { key: string; kind: 'result'; at: string | null; callId: string; output: string; error: boolean };

/** A tool's input or output longer than this is cut (the file has it all). */
export const MAX_ITEM_CHARS = 4000;
/** A prompt or a text of the agent's longer than this is cut. */
export const MAX_TEXT_CHARS = 20_000;

export function clip(text: string, max = MAX_ITEM_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A tool's input as one readable line: the command or path when there is one, else its JSON. */
export function describeInput(input: unknown): string {
  if (typeof input === 'string') return clip(input);
  if (isObject(input)) {
    for (const k of ['command', 'cmd', 'file_path', 'path', 'pattern', 'url', 'query']) {
      const v = input[k];
      if (typeof v === 'string') return clip(v);
      if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return clip(v.join(' '));
    }
  }
  return clip(JSON.stringify(input) ?? '');
}

/** Text of a content value that is a string or a list of `{type: 'text', text}` blocks. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** One line of Claude Code's transcript. */
export function claudeLine(line: Json, n: number): TranscriptItem[] {
  const type = line.type;
  if (type !== 'user' && type !== 'assistant') return [];
  // Lines Claude Code adds itself (command caveats, reminders) are flagged isMeta.
  if (line.isMeta === true || !isObject(line.message)) return [];
  const at = str(line.timestamp);
  const base = str(line.uuid) ?? `L${n}`;
  const content = line.message.content;
  if (typeof content === 'string')
    return content === '' ? [] : [{ key: base, kind: type === 'user' ? 'prompt' : 'text', at, text: content }];
  if (!Array.isArray(content)) return [];
  const out: TranscriptItem[] = [];
  content.forEach((b, i) => {
    if (!isObject(b)) return;
    const key = `${base}:${i}`;
    if (b.type === 'text' && typeof b.text === 'string' && b.text !== '')
      out.push({ key, kind: type === 'user' ? 'prompt' : 'text', at, text: b.text });
    else if (b.type === 'tool_use')
      out.push({
        key,
        kind: 'tool',
        at,
        callId: str(b.id) ?? '',
        name: str(b.name) ?? '?',
        input: describeInput(b.input),
      });
    else if (b.type === 'tool_result')
      out.push({
        key,
        kind: 'result',
        at,
        callId: str(b.tool_use_id) ?? '',
        output: clip(textOf(b.content)),
        error: b.is_error === true,
      });
  });
  return out;
}

/** One line of a codex rollout. */
export function codexLine(line: Json, n: number): TranscriptItem[] {
  const p = line.payload;
  if (!isObject(p)) return [];
  const at = str(line.timestamp);
  const key = `L${n}`;
  if (line.type === 'event_msg') {
    if (p.type === 'user_message' && typeof p.message === 'string')
      return [{ key, kind: 'prompt', at, text: p.message }];
    if (p.type === 'item_completed' && isObject(p.item) && p.item.type === 'UserMessage')
      return [{ key, kind: 'prompt', at, text: textOf(p.item.content) }];
    return [];
  }
  if (line.type !== 'response_item') return [];
  if (p.type === 'message' && p.role === 'assistant') {
    const text = textOf(p.content);
    return text === '' ? [] : [{ key, kind: 'text', at, text }];
  }
  if (p.type === 'custom_tool_call' || p.type === 'function_call') {
    const input = p.type === 'custom_tool_call' ? p.input : parseMaybe(p.arguments);
    return [
      { key, kind: 'tool', at, callId: str(p.call_id) ?? '', name: str(p.name) ?? '?', input: describeInput(input) },
    ];
  }
  if (p.type === 'custom_tool_call_output' || p.type === 'function_call_output') {
    const output = isObject(p.output) ? textOf(p.output.content) || str(p.output.output) : textOf(p.output);
    return [{ key, kind: 'result', at, callId: str(p.call_id) ?? '', output: clip(output ?? ''), error: false }];
  }
  return [];
}

function parseMaybe(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** One line of a gemini chat file. */
export function geminiLine(line: Json): TranscriptItem[] {
  const id = str(line.id);
  if (id === null) return []; // the header, and `$set` updates of the session's metadata
  const at = str(line.timestamp);
  if (line.type === 'user') {
    const text = textOf(line.content);
    return text === '' ? [] : [{ key: id, kind: 'prompt', at, text }];
  }
  if (line.type !== 'gemini') return [];
  const out: TranscriptItem[] = [];
  const text = textOf(line.content);
  if (text !== '') out.push({ key: `${id}:text`, kind: 'text', at, text });
  const calls = Array.isArray(line.toolCalls) ? line.toolCalls : [];
  calls.forEach((c, i) => {
    if (!isObject(c)) return;
    const callId = str(c.id) ?? String(i);
    out.push({ key: `${id}:${i}`, kind: 'tool', at, callId, name: str(c.name) ?? '?', input: describeInput(c.args) });
    if (!Array.isArray(c.result)) return;
    const output = c.result
      .map((r) =>
        isObject(r) && isObject(r.functionResponse) && isObject(r.functionResponse.response)
          ? (str(r.functionResponse.response.output) ?? str(r.functionResponse.response.error) ?? '')
          : '',
      )
      .join('\n');
    out.push({
      key: `${id}:${i}:result`,
      kind: 'result',
      at: str(c.timestamp) ?? at,
      callId,
      output: clip(output),
      error: c.status === 'error',
    });
  });
  return out;
}

/** Pure: the items of one line of `agent`'s transcript (line `n`, from 0); a line that is not JSON gives none. */
export function parseTranscriptLine(agent: ResumableAgent, text: string, n: number): TranscriptItem[] {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return []; // a line being written, or not the conversation's
  }
  if (!isObject(line)) return [];
  const items = agent === 'claude' ? claudeLine(line, n) : agent === 'codex' ? codexLine(line, n) : geminiLine(line);
  return items.map((i) =>
    i.kind === 'prompt' || i.kind === 'text' ? { ...i, text: clip(i.text, MAX_TEXT_CHARS) } : i,
  );
}

/** Pure: every item of a whole transcript, an item written again replacing the earlier one in its place. */
export function parseTranscript(agent: ResumableAgent, text: string): TranscriptItem[] {
  const byKey = new Map<string, TranscriptItem>();
  text.split('\n').forEach((l, n) => {
    for (const item of parseTranscriptLine(agent, l, n)) byKey.set(item.key, item);
  });
  return [...byKey.values()];
}

/**
 * Pure: the items with each tool result moved to just after its call (an agent may call two
 * tools before either answers), for a reader who reads top to bottom. A result whose call is
 * not among the items stays where it was.
 */
export function pairResults(items: readonly TranscriptItem[]): TranscriptItem[] {
  const calls = new Set(items.flatMap((i) => (i.kind === 'tool' && i.callId !== '' ? [i.callId] : [])));
  const resultsOf = new Map<string, TranscriptItem[]>();
  for (const i of items)
    if (i.kind === 'result' && calls.has(i.callId)) resultsOf.set(i.callId, [...(resultsOf.get(i.callId) ?? []), i]);
  const out: TranscriptItem[] = [];
  for (const i of items) {
    if (i.kind === 'result' && calls.has(i.callId)) continue;
    out.push(i);
    if (i.kind === 'tool') out.push(...(resultsOf.get(i.callId) ?? []));
  }
  return out;
}
