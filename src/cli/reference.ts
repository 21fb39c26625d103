import type { CommandReference } from './reference/shared.js';
import { TASKS } from './reference/tasks.js';
import { INSPECTING } from './reference/inspecting.js';
import { REMOVAL } from './reference/removal.js';
import { RUNNING } from './reference/running.js';
import { REVIEWING } from './reference/reviewing.js';
import { LANDING } from './reference/landing.js';
import { INTEGRATIONS } from './reference/integrations.js';
import { SERVICES } from './reference/services.js';
import { CONFLICTS } from './reference/conflicts.js';

export type { CommandReference } from './reference/shared.js';

/** The warren.yaml every example ran with (a throwaway repository: `shop`, with an `origin` remote). */
export const EXAMPLE_SETUP = `$ cat warren.yaml
provision:
  - { path: node_modules, mode: cow }
  - { path: .env, mode: copy }
setup:
  - { id: hello, run: "echo setting up $WARREN_TASK_ID on port $WARREN_PORT" }
verify:
  - { id: test, run: "node app.js", timeout: 30s }
  - { id: lint, run: [sh, -c, "grep -q TODO app.js"], required: false }
protected: [".env.testing"]
agents:
  echo-agent: { command: [cat], prompt: stdin }`;

/** The exit-status convention every command follows (CONTRACT.md). */
export const EXIT_STATUSES: readonly (readonly [status: number, meaning: string])[] = [
  [0, 'done'],
  [1, 'refused or failed; the message on stderr says what happened and that nothing was lost'],
  [2, 'bad input or usage; nothing was touched'],
  [124, 'a supervised command (`exec`, `run`) ran past its `--timeout`'],
];

/** Every command's entry, by the command's full name (`'policy keygen'`), one file per area under reference/. */
export const COMMAND_REFERENCE: Readonly<Record<string, CommandReference>> = {
  ...TASKS,
  ...INSPECTING,
  ...REMOVAL,
  ...RUNNING,
  ...REVIEWING,
  ...LANDING,
  ...INTEGRATIONS,
  ...SERVICES,
  ...CONFLICTS,
};
