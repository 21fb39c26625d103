import path from 'node:path';
import { octal, type Tightened } from '../state/private-home.js';
import type { Store } from '../state/store.js';

/**
 * What WARREN_HOME's opening made private (src/state/private-home.ts), said once: recorded as an
 * event of no project, and returned as the line the command line prints.
 */
export function recordMadePrivate(store: Store, changed: readonly Tightened[]): string {
  const list = changed
    .map((c) => `${path.relative(store.home, c.path) || store.home} ${octal(c.was)} → ${octal(c.now)}`)
    .join(', ');
  const message = `WARREN_HOME ${store.home} could be read by other users of this machine, and it holds your tasks' service passwords; it was made private (${list}). Nothing else was changed; a password another user may have read already stays valid until its task is made again.`;
  store.addEvent({
    project: null,
    kind: 'home.made_private',
    level: 'warn',
    message,
    data: {
      home: store.home,
      changed: changed.map((c) => ({ path: c.path, was: octal(c.was), now: octal(c.now) })),
    },
  });
  return message;
}
