import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/**
 * A scripted model server on 127.0.0.1 for the real agent CLIs. It speaks the three wire formats
 * the CLIs use — Anthropic Messages (claude), the OpenAI Responses API (codex) and Gemini's
 * generateContent (gemini), each streamed as server-sent events — and plays one turn: the first
 * request that offers the CLI's tools is answered with a file edit and a shell command (through
 * the CLI's own tools); once the CLI sends the tools' results back, it answers with a final
 * text and the turn ends. Every other request (title generation, routing, quota checks) gets a
 * short text answer. It records what it received, for the tests to assert on.
 *
 * The turn, in the workspace the CLI names in its own request (its working directory):
 * - writes `agent-note.txt` containing NOTE, with the CLI's file tool;
 * - runs `pwd > ran-in.txt`, with the CLI's shell tool.
 */

export const NOTE = 'written by the scripted model\n';
export const COMMAND = 'pwd > ran-in.txt';
export const FINAL = 'scripted turn done';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** What the server answered with: the tool calls, the final text, or a side answer. */
  answer: 'tools' | 'final' | 'other' | 'unknown';
}

export interface ModelServer {
  port: number;
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export interface ModelServerOptions {
  /**
   * Called before a request is answered; the answer waits for the promise it returns (a test
   * holds the final answer back to watch a turn in progress).
   */
  hold?(request: { path: string; body: Record<string, unknown> }): Promise<void> | undefined;
  /**
   * `background` (claude only): the turn also starts this command with the Bash tool's
   * `run_in_background`, as an agent starting a dev server does, and leaves it running.
   */
  background?: string;
}

/** Pure: does this Anthropic Messages request send tool results back (so the final answer comes next)? */
export function sendsToolResults(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? (body.messages as { content: unknown }[]) : [];
  const last = messages[messages.length - 1];
  return Array.isArray(last?.content) && (last.content as { type?: string }[]).some((b) => b.type === 'tool_result');
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const received: Received[] = [];
  let calls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer());
    const answer = async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        answer: 'unknown',
      };
      received.push(entry);
      const url = req.url ?? '';
      let json: Record<string, unknown> = {};
      try {
        json = body === '' ? {} : (JSON.parse(body) as Record<string, unknown>);
      } catch {
        // not JSON: answered below as unknown
      }
      await options.hold?.({ path: url, body: json });
      if (url.startsWith('/v1/messages')) entry.answer = anthropic(json, res, calls++, options.background);
      else if (url.startsWith('/v1/responses')) entry.answer = openai(json, res, calls++);
      else if (/^\/v1beta\/models\/[^/:]+:(stream)?[gG]enerateContent/.test(url)) entry.answer = gemini(json, url, res);
      else if (req.method === 'HEAD' || req.method === 'GET')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not scripted"}}');
    };
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onTestFinished(close);
  return { port, url: `http://127.0.0.1:${port}`, received, close };
}

/** The working directory a CLI announces in its request (each says it in its own words). */
function workingDirectory(text: string): string | null {
  const patterns = [
    /Primary working directory: ([^\s"\\]+)/,
    /<cwd>([^<]+)<\/cwd>/,
    /Workspace Directories:\*\*\\n\s*- ([^\s"\\]+)/,
    /I'm currently working in the directory: ([^\s"\\]+)/,
  ];
  for (const p of patterns) {
    const m = p.exec(text);
    if (m?.[1]) return m[1];
  }
  return null;
}

function sse(res: http.ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

// --- Anthropic Messages (claude) ---

function anthropic(
  body: Record<string, unknown>,
  res: http.ServerResponse,
  n: number,
  background?: string,
): Received['answer'] {
  const text = JSON.stringify(body);
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]).map((t) => t.name) : [];
  const messages = Array.isArray(body.messages) ? (body.messages as { role: string; content: unknown }[]) : [];
  const last = messages[messages.length - 1];
  const answeredTools =
    Array.isArray(last?.content) && (last.content as { type?: string }[]).some((b) => b.type === 'tool_result');
  const cwd = workingDirectory(text);
  let answer: Received['answer'] = 'other';
  let blocks: ({ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown })[] = [
    { type: 'text', text: 'ok' },
  ];
  if (tools.includes('Bash') && tools.includes('Write') && cwd) {
    if (answeredTools) {
      answer = 'final';
      blocks = [{ type: 'text', text: FINAL }];
    } else if (!text.includes('toolu_scripted_')) {
      answer = 'tools';
      blocks = [
        {
          type: 'tool_use',
          id: `toolu_scripted_write_${n}`,
          name: 'Write',
          input: { file_path: `${cwd}/agent-note.txt`, content: NOTE },
        },
        {
          type: 'tool_use',
          id: `toolu_scripted_bash_${n}`,
          name: 'Bash',
          input: { command: COMMAND, description: 'Record the working directory' },
        },
        ...(background
          ? [
              {
                type: 'tool_use' as const,
                id: `toolu_scripted_bg_${n}`,
                name: 'Bash',
                input: { command: background, description: 'Start the dev server', run_in_background: true },
              },
            ]
          : []),
      ];
    }
  }
  const events: { event: string; data: unknown }[] = [];
  const ev = (type: string, data: Record<string, unknown>) => events.push({ event: type, data: { type, ...data } });
  const model = typeof body.model === 'string' ? body.model : 'claude-scripted';
  ev('message_start', {
    message: {
      id: `msg_scripted_${n}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', {
    delta: { stop_reason: answer === 'tools' ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  ev('message_stop', {});
  if (body.stream === true) {
    sse(res, events);
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `msg_scripted_${n}`,
        type: 'message',
        role: 'assistant',
        model,
        content: blocks,
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      }),
    );
  }
  return answer;
}

// --- OpenAI Responses (codex) ---

/**
 * Codex (0.169) offers its tools through one JavaScript `exec` tool ("code mode") whose script
 * calls the nested tools; older versions offer `shell`/`apply_patch` directly. Both are served.
 */
function openai(body: Record<string, unknown>, res: http.ServerResponse, n: number): Received['answer'] {
  const text = JSON.stringify(body);
  const input = Array.isArray(body.input) ? (body.input as { type?: string }[]) : [];
  const answered = input.some((i) => i.type === 'custom_tool_call_output' || i.type === 'function_call_output');
  const cwd = workingDirectory(text);
  const patch = `*** Begin Patch\n*** Add File: agent-note.txt\n${NOTE.split('\n')
    .filter(Boolean)
    .map((l) => `+${l}`)
    .join('\n')}\n*** End Patch`;
  let answer: Received['answer'] = 'other';
  const responseId = `resp_scripted_${n}`;
  const items: Record<string, unknown>[] = [];
  if (cwd && answered) {
    answer = 'final';
    items.push({
      type: 'message',
      id: `msg_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: FINAL, annotations: [] }],
    });
  } else if (cwd && text.includes('exec_command') && text.includes('"exec"')) {
    answer = 'tools';
    const script = [
      `await tools.apply_patch(${JSON.stringify(patch)});`,
      `const r = await tools.exec_command({ cmd: ${JSON.stringify(COMMAND)}, login: false });`,
      'text(JSON.stringify(r));',
    ].join('\n');
    items.push({
      type: 'custom_tool_call',
      id: `ctc_${n}`,
      status: 'completed',
      call_id: `call_scripted_${n}`,
      name: 'exec',
      namespace: 'functions',
      input: script,
    });
  } else if (cwd && text.includes('"shell"')) {
    answer = 'tools';
    items.push({
      type: 'function_call',
      id: `fc_${n}`,
      status: 'completed',
      call_id: `call_scripted_patch_${n}`,
      name: 'shell',
      arguments: JSON.stringify({ command: ['apply_patch', patch], workdir: cwd }),
    });
    items.push({
      type: 'function_call',
      id: `fc2_${n}`,
      status: 'completed',
      call_id: `call_scripted_cmd_${n}`,
      name: 'shell',
      arguments: JSON.stringify({ command: ['bash', '-c', COMMAND], workdir: cwd }),
    });
  } else {
    items.push({
      type: 'message',
      id: `msg_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'ok', annotations: [] }],
    });
  }
  const response = {
    id: responseId,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: body.model ?? 'scripted',
    output: items,
  };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const events: { event: string; data: unknown }[] = [
    {
      event: 'response.created',
      data: { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
    },
  ];
  items.forEach((item, output_index) => {
    events.push({
      event: 'response.output_item.added',
      data: { type: 'response.output_item.added', output_index, item },
    });
    events.push({
      event: 'response.output_item.done',
      data: { type: 'response.output_item.done', output_index, item },
    });
  });
  events.push({ event: 'response.completed', data: { type: 'response.completed', response: { ...response, usage } } });
  sse(res, events);
  return answer;
}

// --- Gemini generateContent (gemini) ---

function gemini(body: Record<string, unknown>, url: string, res: http.ServerResponse): Received['answer'] {
  const text = JSON.stringify(body);
  const declared = Array.isArray(body.tools) ? JSON.stringify(body.tools) : '';
  const contents = Array.isArray(body.contents)
    ? (body.contents as { parts?: { functionResponse?: unknown }[] }[])
    : [];
  const answered = contents.some((c) => c.parts?.some((p) => p.functionResponse !== undefined));
  const cwd = workingDirectory(text);
  let answer: Received['answer'] = 'other';
  let parts: Record<string, unknown>[];
  const config = body.generationConfig as
    { responseMimeType?: string; responseJsonSchema?: { properties?: Record<string, unknown> } } | undefined;
  if (config?.responseMimeType === 'application/json') {
    // A side question with a JSON answer (model routing, next speaker): fill the schema's fields.
    const fields = Object.keys(config.responseJsonSchema?.properties ?? {});
    const value: Record<string, unknown> = {};
    for (const f of fields) value[f] = /score/.test(f) ? 10 : /speaker/.test(f) ? 'user' : 'scripted';
    parts = [{ text: JSON.stringify(value) }];
  } else if (declared.includes('run_shell_command') && declared.includes('write_file') && cwd) {
    if (answered) {
      answer = 'final';
      parts = [{ text: FINAL }];
    } else {
      answer = 'tools';
      parts = [
        { functionCall: { name: 'write_file', args: { file_path: `${cwd}/agent-note.txt`, content: NOTE } } },
        {
          functionCall: {
            name: 'run_shell_command',
            args: { command: COMMAND, description: 'Record the working directory' },
          },
        },
      ];
    }
  } else {
    parts = [{ text: 'ok' }];
  }
  const chunk = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-scripted',
  };
  if (url.includes(':streamGenerateContent')) sse(res, [{ data: chunk }]);
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chunk));
  return answer;
}
