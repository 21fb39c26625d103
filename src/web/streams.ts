import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { newestConversation } from '../run/transcript.js';
import type { Api, ApiDeps } from './api.js';
import { BoundedSender } from './bounded-sender.js';
import { followLog, resolveLog } from './log-tail.js';
import { logSource } from './run-events.js';
import { followTranscript } from './transcript-stream.js';

/** The dashboard's live routes (server-sent events): what changed, a run's conversation, a command's log. */
export function registerStreams(app: Hono, api: Api): void {
  // Live changes from any process: the page refetches what an event touches.
  app.get('/api/events', (c) =>
    streamSSE(c, async (stream) => {
      let wake: () => void = () => undefined;
      // A tab that stops reading loses events (and is told so), rather than the server queueing them.
      const sender = new BoundedSender((message) => stream.writeSSE(message));
      const unsubscribe = api.hub.subscribe((events) => {
        for (const e of events) {
          const data = JSON.stringify({
            seq: e.seq,
            project: e.project,
            taskId: e.taskId,
            kind: e.kind,
            level: e.level,
            message: e.message,
          });
          sender.send({ event: 'change', id: String(e.seq), data });
        }
      });
      const end = () => {
        api.closers.delete(end);
        unsubscribe();
        wake();
      };
      api.closers.add(end);
      stream.onAbort(end);
      await stream.writeSSE({ event: 'hello', data: JSON.stringify({ seq: api.hub.lastSeq }) });
      while (!stream.aborted && !stream.closed && api.closers.has(end)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 15_000).unref();
        });
        if (api.closers.has(end)) sender.send({ event: 'ping', data: '' });
      }
      end();
    }),
  );

  // The conversation of the task's newest agent run, from its CLI's transcript, followed until the run ends.
  app.get('/api/transcript', async (c) => {
    const { ctx, id } = await api.taskOf(c);
    const first = newestConversation(api.store, ctx.key, id);
    if (!first)
      return c.json(
        {
          error: { code: 'NO_TRANSCRIPT', message: `task ${id} has no agent run whose conversation warren can read.` },
        },
        404,
      );
    return streamSSE(c, async (stream) => {
      const send = (event: string, data: unknown): Promise<void> =>
        stream.writeSSE({ event, data: JSON.stringify(data) });
      await followOnStream(stream, api, (done) =>
        followTranscript({
          // The same run, looked up again each time: its transcript may appear after it started.
          conversation: () => {
            const now = newestConversation(api.store, ctx.key, id);
            return now?.runId === first.runId ? now : null;
          },
          onMeta: (m) => send('meta', m),
          onItems: (items, skipped) => send('items', { items, skipped }),
          onEnd: async (info) => {
            await send('end', info);
            done();
          },
        }),
      );
    });
  });

  // The live log of the task's newest command, followed until its finishing event.
  app.get('/api/log', async (c) => {
    const { ctx, id } = await api.taskOf(c);
    const source = logSource(api.store.taskEvents(ctx.key, id, 200));
    if (!source) return c.json({ error: { code: 'NO_LOG', message: `task ${id} has no command log yet.` } }, 404);
    const roots = [api.store.home, ctx.root, ctx.repo.commonDir];
    const resolved = resolveLog(source.path, roots);
    if (resolved === 'outside') {
      return c.json(
        {
          error: {
            code: 'PATH_ESCAPE',
            message: `the log path ${source.path} is outside warren's folders; the dashboard does not serve it.`,
          },
        },
        403,
      );
    }
    return streamSSE(c, async (stream) => {
      // Each send settles once the client took it: the follower reads no further until then (log-tail.ts).
      const send = (event: string, data: unknown): Promise<void> =>
        stream.writeSSE({ event, data: JSON.stringify(data) });
      await send('meta', { path: source.path, startedSeq: source.startedSeq });
      const isFinished = (): boolean => {
        const now = logSource(api.store.taskEvents(ctx.key, id, 200));
        return now === null || now.startedSeq !== source.startedSeq || now.finished !== null;
      };
      await followOnStream(stream, api, (done) =>
        followLog({
          // Re-resolved and re-checked each time: the file may not exist yet when the command has just started.
          resolve: () => {
            const now = resolveLog(source.path, roots);
            return now === null || now === 'outside' ? null : now.real;
          },
          isFinished,
          onStart: (info) => send('start', info),
          onChunk: (text) => send('chunk', { text }),
          onSkip: (info) => send('skip', info),
          onEnd: async (info) => {
            const finished = logSource(api.store.taskEvents(ctx.key, id, 200))?.finished ?? null;
            await send('end', {
              ...info,
              finished: finished ? { kind: finished.kind, message: finished.message, data: finished.data } : null,
            });
            done();
          },
        }),
      );
    });
  });
}

/**
 * Runs a follower on an SSE stream until it says it is done, the client goes away, or the server
 * closes (its closers): whichever comes first stops it, once.
 */
function followOnStream(
  stream: { onAbort(listener: () => void): void },
  deps: Pick<ApiDeps, 'closers'>,
  start: (done: () => void) => { stop(): void },
): Promise<void> {
  return new Promise<void>((resolve) => {
    let follower: { stop(): void } | null = null;
    let ended = false;
    const done = (): void => {
      if (ended) return;
      ended = true;
      follower?.stop();
      deps.closers.delete(done);
      resolve();
    };
    follower = start(done);
    if (ended) follower.stop();
    deps.closers.add(done);
    stream.onAbort(done);
  });
}
