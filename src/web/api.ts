import path from 'node:path';
import type { Context, Hono } from 'hono';
import { WarrenError } from '../errors.js';
import type { Store } from '../state/store.js';
import { errorDocument, recordRefusal, refusalOf } from '../views/errors.js';
import { openProjectWith, type ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { parseActionRequest } from './action-request.js';
import { describeActions, findAction } from './actions.js';
import type { EventHub } from './event-hub.js';
import { fleetDisk } from './disk.js';
import { editorCommand } from '../workspace/editor.js';
import { allProjectsFleet, projectDetails, projectFleet } from './fleet.js';
import { taskView } from './task-view.js';
import { conflictsReport } from '../conflicts/operations.js';
import { registerStreams } from './streams.js';

export interface ApiDeps {
  project: ProjectContext;
  store: Store;
  hub: EventHub;
  /** Open streams register how to end them, so that closing the server ends them. */
  closers: Set<() => void>;
  /** Actions still running: closing the server waits for them instead of cutting one in half. */
  inflight: Set<Promise<unknown>>;
}

/** What the routes share: the deps, and how a request names a project or a task. */
export interface Api extends ApiDeps {
  /** The serving project, or another one recorded under WARREN_HOME, opened like the CLI opens it. */
  projectFor(key: string | undefined): Promise<ProjectContext>;
  /** The task a route follows (`?project=&id=`), its project opened. */
  taskOf(c: Context): Promise<{ ctx: ProjectContext; id: string }>;
}

/**
 * The read-only routes, each a library call answered as JSON; a refusal is thrown and answered
 * by `onError`, as every route's is. test/views-front-ends.test.ts holds each one against the CLI.
 */
const READS: readonly { path: string; read(c: Context, api: Api): Promise<unknown> }[] = [
  {
    path: '/api/meta',
    read: async (_c, api) => ({
      // config.yaml's editor, for the page's "Open in editor" (null: none set, or the file is invalid).
      editor: await editorCommand(api.store.home).catch(() => null),
      project: api.project.key,
      name: path.basename(api.project.repo.root),
      root: api.project.repo.root,
      home: api.store.home,
      actions: describeActions(api.project.config),
      seq: api.hub.lastSeq,
    }),
  },
  {
    // The fleet from the database alone, at once; what needs git and a walk of each workspace is
    // the details, which the page asks for next and fills in.
    path: '/api/fleet',
    read: async (c, api) =>
      c.req.query('all') === '1'
        ? allProjectsFleet(api.store, api.project)
        : { generatedAt: new Date().toISOString(), projects: [projectFleet(api.project)] },
  },
  { path: '/api/fleet/details', read: async (c, api) => projectDetails(await api.projectFor(c.req.query('project'))) },
  // The disk and age of every task of a repository: a walk of each workspace, so on demand only.
  { path: '/api/disk', read: async (c, api) => fleetDisk(await api.projectFor(c.req.query('project'))) },
  {
    path: '/api/task',
    read: async (c, api) => taskView(await api.projectFor(c.req.query('project')), c.req.query('id') ?? ''),
  },
  {
    // The conflict map, computed again (every live workspace read): the pairs that do not merge, with
    // both sides' hunks; `id` keeps that task's. The fleet has the map as last computed.
    path: '/api/conflicts',
    read: async (c, api) => {
      const id = c.req.query('id');
      return conflictsReport(await api.projectFor(c.req.query('project')), id === '' ? undefined : id);
    },
  },
];

/** The HTTP status of a refusal: an unknown task 404, bad input 400, any other refusal 409. */
export function statusOf(err: WarrenError): 400 | 404 | 409 {
  return err.code === 'TASK_NOT_FOUND' ? 404 : err.exitCode === 2 ? 400 : 409;
}

export function registerApi(app: Hono, deps: ApiDeps): void {
  const projectFor: Api['projectFor'] = async (key) => {
    if (key === undefined || key === deps.project.key) return deps.project;
    const known = deps.store.listProjects().find((p) => p.key === key);
    if (!known)
      throw new WarrenError(
        'USAGE',
        `no repository ${JSON.stringify(key)} is known under ${deps.store.home}; nothing was changed.`,
      );
    return openProjectWith(known.root, {
      lifecycle: deps.project.lifecycle,
      store: deps.store,
      reporter: deps.project.reporter,
    });
  };
  const taskOf: Api['taskOf'] = async (c) => ({
    ctx: await projectFor(c.req.query('project')),
    id: validateTaskId(c.req.query('id') ?? ''),
  });
  const api: Api = { ...deps, projectFor, taskOf };
  /** The action a request is, once its project was opened: its refusal is recorded against them. */
  const acting = new WeakMap<Request, { ctx: ProjectContext; taskId: string | null; action: string }>();

  // Every route's refusal, in one place: the error document the CLI prints with --json, with
  // a status. A refused action is recorded as the CLI and MCP record theirs; a read is not (the
  // page reads again on every event, and a refusal recorded would be one more).
  app.onError((thrown, c) => {
    const err = refusalOf(thrown);
    const at = acting.get(c.req.raw);
    if (err && at) recordRefusal(at.ctx, at.taskId, err, `dashboard ${at.action}`);
    return c.json(errorDocument(thrown), err ? statusOf(err) : 500);
  });

  for (const route of READS) app.get(route.path, async (c) => c.json(await route.read(c, api)));

  app.post('/api/actions/:name', async (c) => {
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
    const ctx = await api.projectFor(request.project);
    acting.set(c.req.raw, { ctx, taskId: request.id ?? null, action: action.name });
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
  });

  registerStreams(app, api);
}
