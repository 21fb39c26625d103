import path from 'node:path';
import type { Context, Hono } from 'hono';
import { environmentError } from '../state/faults.js';
import { streamSSE } from 'hono/streaming';
import { WarrenError, isWarrenError } from '../errors.js';
import type { Store } from '../state/store.js';
import { openProjectWith, type ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { parseActionRequest } from './action-request.js';
import { describeActions, findAction } from './actions.js';
import { BoundedSender } from './bounded-sender.js';
import type { EventHub } from './event-hub.js';
import { fleetDisk } from './disk.js';
import { editorCommand } from '../workspace/editor.js';
import { allProjectsFleet, projectDetails, projectFleet } from './fleet.js';
import { followLog, resolveLog } from './log-tail.js';
import { logSource } from './run-events.js';
import { newestConversation } from '../run/transcript.js';
import { taskView } from './task-view.js';
import { conflictsReport } from '../conflicts/operations.js';
import { followTranscript } from './transcript-stream.js';

export interface ApiDeps {
  project: ProjectContext;
  store: Store;
  hub: EventHub;
  /** Open streams register how to end them, so that closing the server ends them. */
  closers: Set<() => void>;
  /** Actions still running: closing the server waits for them instead of cutting one in half. */
  inflight: Set<Promise<unknown>>;
}

/** A guard's refusal goes to the page exactly as the CLI would print it: code, message, hint. */
function errorResponse(c: Context, thrown: unknown): Response {
  const err = environmentError(thrown) ?? thrown;
  if (isWarrenError(err)) {
    const status = err.code === 'TASK_NOT_FOUND' ? 404 : err.exitCode === 2 ? 400 : 409;
    return c.json({ error: { code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) } }, status);
  }
  const message = err instanceof Error ? err.message : String(err);
  return c.json({ error: { code: 'INTERNAL', message, hint: 'This is a bug in warren; please report it.' } }, 500);
}

export function registerApi(app: Hono, deps: ApiDeps): void {
  const { store, hub } = deps;

  /** The serving project, or another one recorded under WARREN_HOME, opened like the CLI opens it. */
  const projectFor = async (key: string | undefined): Promise<ProjectContext> => {
    if (key === undefined || key === deps.project.key) return deps.project;
    const known = store.listProjects().find((p) => p.key === key);
    if (!known)
      throw new WarrenError(
        'USAGE',
        `no repository ${JSON.stringify(key)} is known under ${store.home}; nothing was changed.`,
      );
    return openProjectWith(known.root, { lifecycle: deps.project.lifecycle, store, reporter: deps.project.reporter });
  };
  /** The task a streaming route follows (`?project=&id=`), or the refusal to answer with. */
  const taskOf = async (c: Context): Promise<{ ctx: ProjectContext; id: string } | Response> => {
    try {
      return { ctx: await projectFor(c.req.query('project')), id: validateTaskId(c.req.query('id') ?? '') };
    } catch (err) {
      return errorResponse(c, err);
    }
  };

  app.get('/api/meta', async (c) =>
    c.json({
      // config.yaml's editor, for the page's "Open in editor" (null: none set, or the file is invalid).
      editor: await editorCommand(store.home).catch(() => null),
      project: deps.project.key,
      name: path.basename(deps.project.repo.root),
      root: deps.project.repo.root,
      home: store.home,
      actions: describeActions(deps.project.config),
      seq: hub.lastSeq,
    }),
  );

  // The fleet from the database alone, at once; what needs git and a walk of each workspace is
  // the details, which the page asks for next and fills in.
  app.get('/api/fleet', async (c) => {
    try {
      if (c.req.query('all') === '1') return c.json(await allProjectsFleet(store, deps.project));
      return c.json({ generatedAt: new Date().toISOString(), projects: [projectFleet(deps.project)] });
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.get('/api/fleet/details', async (c) => {
    try {
      return c.json(await projectDetails(await projectFor(c.req.query('project'))));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  // The disk and age of every task of a repository: a walk of each workspace, so on demand only.
  app.get('/api/disk', async (c) => {
    try {
      return c.json(await fleetDisk(await projectFor(c.req.query('project'))));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.get('/api/task', async (c) => {
    try {
      return c.json(await taskView(await projectFor(c.req.query('project')), c.req.query('id') ?? ''));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  // The conflict map, computed again (every live workspace read): the pairs that do not merge, with
  // both sides' hunks; `id` keeps that task's. The fleet has the map as last computed.
  app.get('/api/conflicts', async (c) => {
    try {
      const id = c.req.query('id');
      return c.json(await conflictsReport(await projectFor(c.req.query('project')), id === '' ? undefined : id));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.post('/api/actions/:name', async (c) => {
    try {
      const action = findAction(c.req.param('name'));
      if (!action)
        throw new WarrenError(
          'USAGE',
          `the dashboard has no action ${JSON.stringify(c.req.param('name'))}; nothing was changed.`,
        );
      const body: unknown = await c.req.json().catch(() => {
        throw new WarrenError('USAGE', 'the request body is not JSON; nothing was changed.');
      });
      const request = parseActionRequest(action, body);
      const ctx = await projectFor(request.project);
      // An agent's run goes on after the answer: the server waits for it as for an action.
      const keep = (work: Promise<unknown>) => {
        deps.inflight.add(work);
        void work.finally(() => deps.inflight.delete(work));
      };
      const running =
        action.scope === 'task'
          ? action.run(ctx, request.id ?? '', request.options, keep)
          : action.run(ctx, request.options, keep);
      deps.inflight.add(running);
      try {
        return c.json({ ok: true, result: await running });
      } finally {
        deps.inflight.delete(running);
      }
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  // Live changes from any process: the page refetches what an event touches.
  app.get('/api/events', (c) =>
    streamSSE(c, async (stream) => {
      let wake: () => void = () => undefined;
      // A tab that stops reading loses events (and is told so), rather than the server queueing them.
      const sender = new BoundedSender((message) => stream.writeSSE(message));
      const unsubscribe = hub.subscribe((events) => {
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
        deps.closers.delete(end);
        unsubscribe();
        wake();
      };
      deps.closers.add(end);
      stream.onAbort(end);
      await stream.writeSSE({ event: 'hello', data: JSON.stringify({ seq: hub.lastSeq }) });
      while (!stream.aborted && !stream.closed && deps.closers.has(end)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 15_000).unref();
        });
        if (deps.closers.has(end)) sender.send({ event: 'ping', data: '' });
      }
      end();
    }),
  );

  // The conversation of the task's newest agent run, from its CLI's transcript, followed until the run ends.
  app.get('/api/transcript', async (c) => {
    const task = await taskOf(c);
    if (task instanceof Response) return task;
    const { ctx, id } = task;
    const first = newestConversation(store, ctx.key, id);
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
      await followOnStream(stream, deps, (done) =>
        followTranscript({
          // The same run, looked up again each time: its transcript may appear after it started.
          conversation: () => {
            const now = newestConversation(store, ctx.key, id);
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
    const task = await taskOf(c);
    if (task instanceof Response) return task;
    const { ctx, id } = task;
    const source = logSource(store.taskEvents(ctx.key, id, 200));
    if (!source) return c.json({ error: { code: 'NO_LOG', message: `task ${id} has no command log yet.` } }, 404);
    const roots = [store.home, ctx.root, ctx.repo.commonDir];
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
        const now = logSource(store.taskEvents(ctx.key, id, 200));
        return now === null || now.startedSeq !== source.startedSeq || now.finished !== null;
      };
      await followOnStream(stream, deps, (done) =>
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
            const finished = logSource(store.taskEvents(ctx.key, id, 200))?.finished ?? null;
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
