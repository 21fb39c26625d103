// What the page knows between renders, shared by its views; and the two calls a view makes back
// into the page (set by app.js): draw again now, and read again from the server.

export const state = {
  /** /api/meta: the repository served, the actions and their options. */
  meta: null,
  /** /api/fleet: every task as the database has it. */
  fleet: null,
  /** /api/fleet/details by repository: each task's drift, changes and provisioned paths, and the strays. */
  details: new Map(),
  /** Tasks asked for (New task, Start agent) that the fleet does not list yet, by `project/id`. */
  pending: new Map(),
  /** Actions running on a task, by `project/id`: what the row says while it waits. */
  busy: new Map(),
  /** The row menu that is open, kept open across a redraw. */
  openMenu: null,
  /** A comment is being written: the task view is not redrawn under it (it is once the form closes). */
  composing: false,
};

export const page = {
  /** Draws the current view again from what the page has. */
  render: () => undefined,
  /** Reads the current view from the server again, after `ms`. */
  refresh: (_ms) => undefined,
  /** How many reads of the fleet have started so far. */
  reads: () => 0,
};

export function taskKey(project, id) {
  return `${project}/${id}`;
}

export function taskHref(project, id, tab) {
  return `#/task/${encodeURIComponent(project)}/${encodeURIComponent(id)}${tab ? `/${tab}` : ''}`;
}

/** What people call a repository (its folder's name), not warren's internal key. */
export function repoName(project) {
  const p = state.fleet && state.fleet.projects.find((x) => x.key === project);
  return p ? p.name : state.meta && state.meta.project === project ? state.meta.name : project;
}
