import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import type { ResumableAgent } from '../../src/run/agents.js';
import { newestConversation, readTranscript, TranscriptReader } from '../../src/run/transcript.js';
import { pairResults, parseTranscript, type TranscriptItem } from '../../src/run/transcript-parse.js';
import { AGENT_CLI_BIN, unavailable, type CapabilityName } from '../helpers/capabilities.js';
import { COMMAND, FINAL, NOTE, startModelServer } from '../helpers/model-server.js';
import { makeRepo, runCli, tmpDir } from '../helpers/repo.js';

/**
 * The agent's conversation, read from the transcript its CLI writes in the task's state folder:
 * the real CLIs play one scripted turn (write a file, run a command, finish) and the reader must
 * give the prompt, both tool calls with their results, and the final text — where the agent's
 * log (its stdout) holds only the final text.
 */

const PROMPT = 'Write the note, then record where you are.';

/** The items without keys and times, the way a reader sees the conversation. */
function shape(items: TranscriptItem[]): string[] {
  return items.map((i) =>
    i.kind === 'tool'
      ? `tool ${i.name}: ${i.input}`
      : i.kind === 'result'
        ? `result${i.error ? ' (error)' : ''}: ${i.output}`
        : `${i.kind}: ${i.text}`,
  );
}

/** Each CLI's own names for the turn's two tool calls. */
const EXPECTED: Record<ResumableAgent, (cwd: string) => RegExp[]> = {
  claude: (cwd) => [
    /^prompt: Write the note/,
    new RegExp(`^tool Write: ${cwd}/agent-note.txt$`),
    /^tool Bash: pwd > ran-in.txt$/,
    /^result: File created successfully/,
    /^result: \(Bash completed with no output\)$/,
    new RegExp(`^text: ${FINAL}$`),
  ],
  gemini: (cwd) => [
    /^prompt: Write the note/,
    new RegExp(`^tool write_file: ${cwd}/agent-note.txt$`),
    /^result: Successfully created and wrote/,
    /^tool run_shell_command: pwd > ran-in.txt$/,
    /^result: /,
    new RegExp(`^text: ${FINAL}$`),
  ],
  // codex 0.169 calls its tools from one JavaScript `exec` script.
  codex: () => [
    /^prompt: Write the note/,
    /^tool exec: await tools.apply_patch\(.*agent-note.txt[\s\S]*pwd > ran-in.txt/,
    /^result: Script completed/,
    new RegExp(`^text: ${FINAL}$`),
  ],
};

for (const agent of ['claude', 'gemini', 'codex'] as const) {
  const missing = unavailable(import.meta.filename, `${agent}-cli` as CapabilityName);
  describe.skipIf(missing !== null)(`the transcript of a real ${agent} run`, () => {
    it('gives the prompt, the tool calls with their results, and the final text', { timeout: 120_000 }, async () => {
      const server = await startModelServer();
      const repo = makeRepo({ files: { 'README.md': '# main\n' } });
      const userHome = tmpDir(`warren-${agent}-user-`);
      // codex refuses to unpack its sandbox's helpers under the system temp folder (see agents-real).
      const home = agent === 'codex' ? fs.realpathSync(fs.mkdtempSync('/var/tmp/warren-transcript-')) : repo.home;
      if (agent === 'codex') {
        fs.mkdirSync(path.join(userHome, '.codex'));
        fs.writeFileSync(
          path.join(userHome, '.codex', 'config.toml'),
          `model_provider = "s"\n[model_providers.s]\nname = "s"\nbase_url = "${server.url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`,
        );
      }
      try {
        const env = {
          PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
          HOME: userHome,
          CLAUDE_CONFIG_DIR: '',
          CODEX_HOME: '',
          GEMINI_CLI_HOME: '',
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: 'scripted',
          GOOGLE_GEMINI_BASE_URL: server.url,
          GEMINI_API_KEY: 'scripted',
          OPENAI_API_KEY: 'scripted',
        };
        const w = (...args: string[]) => runCli(args, { cwd: repo.root, home, env });
        const made = await w('--json', 'new', 'feat', 't1');
        expect(made.code, made.stderr).toBe(0);
        const cwd = (JSON.parse(made.stdout) as { path: string }).path;
        const ran = await w('--json', 'run', 't1', '--agent', agent, '--prompt', PROMPT, '--timeout', '90s');
        expect(ran.code, ran.stderr).toBe(0);
        const run = JSON.parse(ran.stdout) as { log: string; runId: string; session: string };
        expect(fs.readFileSync(path.join(cwd, 'agent-note.txt'), 'utf8')).toBe(NOTE);
        // Claude's log (its stdout) has the final words but not the tool calls: the bug.
        if (agent === 'claude') expect(fs.readFileSync(run.log, 'utf8')).not.toContain(COMMAND);

        const store = openStore(home);
        try {
          const [project] = store.listProjects();
          const conv = newestConversation(store, project!.key, 't1');
          expect(conv).toMatchObject({ agent, runId: run.runId, session: run.session, running: false });
          expect(conv!.file).not.toBeNull();
          const items = shape(readTranscript(agent, conv!.file!));
          const expected = EXPECTED[agent](cwd);
          expect(items, items.join('\n')).toHaveLength(expected.length);
          items.forEach((item, i) => expect(item).toMatch(expected[i]!));
        } finally {
          store.close();
        }
        // `warren transcript`: the same items, and each result under its call for a person.
        const cli = await w('--json', 'transcript', 't1');
        expect(cli.code, cli.stderr).toBe(0);
        const shown = JSON.parse(cli.stdout) as { agent: string; items: TranscriptItem[] };
        expect(shown.agent).toBe(agent);
        expect(shape(shown.items)).toHaveLength(EXPECTED[agent](cwd).length);
        const human = await w('transcript', 't1');
        expect(human.stdout).toContain(`> ${PROMPT}\n`);
        expect(human.stdout).toMatch(new RegExp(`\\n${FINAL}\\n$`));
        if (agent === 'claude')
          expect(human.stdout).toMatch(/\n▸ Bash {2}pwd > ran-in.txt\n {4}\(Bash completed with no output\)\n/);
      } finally {
        if (home !== repo.home) fs.rmSync(home, { recursive: true, force: true });
      }
    });
  });
}

describe('warren transcript', () => {
  it('refuses a task with no agent run it can read, naming how to start one', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'bare')).code).toBe(0);
    const r = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('transcript', 'bare');
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({
      code: 'AGENT_NO_SESSION',
      message: 'task bare has no run of claude, codex or gemini, whose conversations warren can read.',
    });
    expect((await repo.warrenJson('transcript', 'nope')).code).toBe(2);
  });

  it('puts each tool result under its call', () => {
    const items: TranscriptItem[] = [
      { key: '1', kind: 'tool', at: null, callId: 'a', name: 'Write', input: 'x' },
      { key: '2', kind: 'tool', at: null, callId: 'b', name: 'Bash', input: 'ls' },
      { key: '3', kind: 'result', at: null, callId: 'a', output: 'ok', error: false },
      { key: '4', kind: 'result', at: null, callId: 'zz', output: 'orphan', error: false },
      { key: '5', kind: 'result', at: null, callId: 'b', output: 'a.txt', error: false },
    ];
    expect(pairResults(items).map((i) => i.key)).toEqual(['1', '3', '2', '5', '4']);
  });
});

describe('transcript readers on literal lines', () => {
  it('claude: skips bookkeeping and meta lines; tool results keep their error flag', () => {
    const lines = [
      { type: 'queue-operation', operation: 'enqueue', content: 'x' },
      { type: 'user', uuid: 'u1', timestamp: 't0', message: { role: 'user', content: 'Fix it.' } },
      { type: 'user', uuid: 'm1', isMeta: true, message: { role: 'user', content: '<caveat>' } },
      { type: 'attachment', uuid: 'a1', attachment: { type: 'environment' } },
      {
        type: 'assistant',
        uuid: 'a2',
        message: {
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'c1', name: 'Bash', input: { command: 'npm test' } },
          ],
        },
      },
      {
        type: 'user',
        uuid: 'u2',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: '1 failed' }], is_error: true },
          ],
        },
      },
      { type: 'cost-state', totalCostUSD: 0 },
    ];
    const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"type":"assistant","mess`;
    expect(shape(parseTranscript('claude', text))).toEqual([
      'prompt: Fix it.',
      'text: Looking.',
      'tool Bash: npm test',
      'result (error): 1 failed',
    ]);
  });

  it('cuts a long tool output and a long text, saying how much was left out', () => {
    const lines = [
      { type: 'assistant', uuid: 'a', message: { content: [{ type: 'text', text: 'x'.repeat(25_000) }] } },
      {
        type: 'user',
        uuid: 'u',
        message: { content: [{ type: 'tool_result', tool_use_id: 'c', content: 'y'.repeat(5000) }] },
      },
    ];
    const [text, result] = parseTranscript('claude', lines.map((l) => JSON.stringify(l)).join('\n'));
    expect(text).toMatchObject({ kind: 'text', text: `${'x'.repeat(20_000)}… [5000 more characters]` });
    expect(result).toMatchObject({ kind: 'result', output: `${'y'.repeat(4000)}… [1000 more characters]` });
  });

  it('gemini: a message written again with its results replaces the first, in its place', () => {
    const lines = [
      { sessionId: 's', projectHash: 'h', kind: 'main' },
      { $set: { messages: [{ id: 'ctx', type: 'user', content: [{ text: '<session_context>' }] }] } },
      { id: 'p', type: 'user', content: [{ text: 'Go.' }] },
      { id: 'g', type: 'gemini', content: '', toolCalls: [] },
      {
        id: 'g',
        type: 'gemini',
        content: '',
        toolCalls: [
          {
            id: 'c',
            name: 'run_shell_command',
            args: { command: 'ls' },
            status: 'error',
            result: [{ functionResponse: { response: { error: 'denied' } } }],
          },
        ],
      },
      { id: 'e', type: 'gemini', content: 'Done.' },
    ];
    expect(shape(parseTranscript('gemini', lines.map((l) => JSON.stringify(l)).join('\n')))).toEqual([
      'prompt: Go.',
      'tool run_shell_command: ls',
      'result (error): denied',
      'text: Done.',
    ]);
  });

  it('codex: older rollouts (user_message, function_call with a JSON argument string)', () => {
    const lines = [
      { type: 'session_meta', payload: { id: 's' } },
      {
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>' }] },
      },
      { type: 'event_msg', payload: { type: 'user_message', message: 'Add a cart.' } },
      {
        type: 'response_item',
        payload: { type: 'function_call', name: 'shell', call_id: 'k', arguments: '{"command":["bash","-lc","ls"]}' },
      },
      { type: 'response_item', payload: { type: 'function_call_output', call_id: 'k', output: 'a.txt' } },
      {
        type: 'response_item',
        payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Added.' }] },
      },
    ];
    expect(shape(parseTranscript('codex', lines.map((l) => JSON.stringify(l)).join('\n')))).toEqual([
      'prompt: Add a cart.',
      'tool shell: bash -lc ls',
      'result: a.txt',
      'text: Added.',
    ]);
  });

  it('follows a file as it grows: a line is read once it is complete, a split character is kept whole', () => {
    const dir = tmpDir();
    const file = path.join(dir, 't.jsonl');
    const line = JSON.stringify({ type: 'assistant', uuid: 'x', message: { content: 'héllo wörld' } });
    const bytes = Buffer.from(`${line}\n`);
    const cut = bytes.indexOf(Buffer.from('ö')) + 1; // inside the two bytes of ö
    fs.writeFileSync(file, bytes.subarray(0, cut));
    const reader = new TranscriptReader('claude', file);
    expect(reader.readNew()).toEqual([]);
    fs.appendFileSync(file, bytes.subarray(cut));
    expect(shape(reader.readNew())).toEqual(['text: héllo wörld']);
    expect(reader.readNew()).toEqual([]);
  });
});
