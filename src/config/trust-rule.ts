import type { PostgresServiceConfig, RedisServiceConfig, RunServiceConfig, WarrenConfig } from './schema.js';

/**
 * How each key of warren.yaml counts in the set a user trusts (config/trust.ts,
 * docs/design/trust.md). Every key is trusted unless this table shows it free, and the tables
 * are checked against the schema's types (`satisfies Record<keyof …>`): a key added to the
 * schema does not compile until it is classified here. (A table of its own, not in schema.ts:
 * the schema loads zod, which warren loads only when a file must be validated.)
 *
 * - `'setting'`: counted by its value, as it acts (config/trust.ts `securitySettings`);
 * - `'commands'`: its entries are commands, counted by what they run; each field of an entry is
 *   classified in COMMAND_FIELD_TRUST;
 * - `{ keys }`: an object whose keys are classified one by one (`land.gate`);
 * - `{ free }`: counts for nothing. Free means a change to it changes nothing a later task sees
 *   or keeps, and runs nothing; `free` says why.
 */
export interface Free {
  free: string;
}
export type SettingTrust = 'setting' | Free;
export type KeyTrust = 'commands' | SettingTrust | { keys: Record<string, SettingTrust> };

type Land = NonNullable<WarrenConfig['land']>;

export const CONFIG_TRUST = {
  // These four first, in this order: the set has listed them so since it first counted
  // settings, and the order is in its hash (another order would ask every user for trust again).
  sandbox: 'setting',
  network: 'setting',
  protected: 'setting',
  land: {
    keys: {
      gate: 'setting',
      batch: {
        free: 'how many queued tasks one gate run tests together: each lands only through the same gate, and a failing batch is split until the culprit bounces alone',
      },
      parallel: {
        free: 'whether bisection gates both halves of a failed batch at once or one after the other: the same gate runs on the same commits either way',
      },
      speculate: {
        free: 'how many batches the queue integrates and gates ahead of the one in its gate: a speculative run counts only when what it was built on landed as integrated, so every entry still lands only through the same gate on the tree that lands',
      },
      gates: {
        free: 'how many gate runs may run at once: the same gate runs on the same commits either way',
      },
      conflicts: {
        free: 'whether the queue leaves an entry that does not merge with an earlier one out of its batch, and bounces one that no longer merges with the base before its turn: every entry still lands only through the same squash and gate',
      },
    } satisfies Record<keyof Land, SettingTrust>,
  },
  worktree_root: 'setting',
  provision: 'setting',
  provision_budget: 'setting',
  checkout: 'setting',
  // Where the task's code runs and what it is given there: trusted like the sandbox.
  runner: 'setting',
  ports: 'setting',
  kill_grace: {
    free: 'how long warren waits, when it stops a command, between asking it to end and killing it: like a timeout, it bounds a run that was started anyway, in the same sandbox, and runs, shows or keeps nothing else',
  },
  archive: 'setting',
  setup: 'commands',
  verify: 'commands',
  teardown: 'commands',
  agents: 'commands',
  services: 'commands',
  conflicts: {
    keys: {
      sync: {
        free: "how `warren sync` brings the base's commits into a task (rebase or merge): git's own operation on the task's branch, asked for by the user, in which no hook and nothing of the repository runs",
      },
      tell: {
        free: "whether `warren run` adds a note naming the task's new conflicts (task IDs and paths) to the prompt the user gave: text for the agent, in the same sandbox; nothing runs",
      },
    } satisfies Record<keyof NonNullable<WarrenConfig['conflicts']>, SettingTrust>,
  },
  hosts: {
    free: "always refused when present (config/schema.ts): the machines tasks run on are declared only in the user's $WARREN_HOME/config.yaml, so a repository never sets one",
  },
  types: {
    free: "the task types `warren new` accepts: a type is what the user types, and it only names the task's branch (TYPE/ID); no task sees it, nothing is kept or deleted by it, and nothing runs",
  },
} as const satisfies Record<keyof WarrenConfig, KeyTrust>;

/**
 * A field of a command entry: `'command'` is in the command's canonical form (what it runs, and
 * how); `'land.gate'` is counted as the gate it makes (config/trust.ts); free says why not.
 */
export type FieldTrust = 'command' | 'land.gate' | Free;

const TIMEOUT: Free = {
  free: 'how long a counted command may run before warren stops it: it runs, shows or keeps nothing else, in the same sandbox, and a gate step that runs out fails the gate',
};

type Entry<K extends 'setup' | 'verify' | 'teardown'> = WarrenConfig[K][number];
type Agent = NonNullable<WarrenConfig['agents']>[string];
type ServiceField = keyof PostgresServiceConfig | keyof RedisServiceConfig | keyof RunServiceConfig;

export const COMMAND_FIELD_TRUST = {
  setup: {
    id: 'command',
    run: 'command',
    timeout: TIMEOUT,
    gate: {
      free: "whether the gate's integration workspace runs this counted command too: it runs there in the gate's sandbox, the strictest of the batch's, and what it builds is thrown away with that workspace",
    },
  } satisfies Record<keyof Entry<'setup'>, FieldTrust>,
  verify: {
    id: 'command',
    run: 'command',
    // Without land.gate, the gate is the required verify commands: `required: false` on all of them is no gate.
    required: 'land.gate',
    timeout: TIMEOUT,
  } satisfies Record<keyof Entry<'verify'>, FieldTrust>,
  teardown: { id: 'command', run: 'command', timeout: TIMEOUT } satisfies Record<keyof Entry<'teardown'>, FieldTrust>,
  agents: {
    command: 'command',
    prompt: 'command',
    leftover_grace: {
      free: 'how long processes a finished agent left may run before warren ends them: like a timeout, it bounds a run that was started anyway, in the same sandbox, and runs, shows or keeps nothing else',
    },
  } satisfies Record<keyof Agent, FieldTrust>,
  services: {
    kind: 'command',
    template: 'command',
    seed: 'command',
    run: 'command',
    // The variable the task's commands find the service's URL in: which one is what they see.
    env: 'command',
    // How much of the shared server a task's role may take (connections, statement timeouts): a
    // landed change would let the next task starve the others' databases, up to the user's caps.
    limits: 'command',
    start: {
      free: "when a counted service starts (with the task, or at its first `warren service start`): it runs the same thing in the task's sandbox either way",
    },
    ready: {
      free: 'how warren tells a counted service is up (a path, its port, a log line): it runs nothing, and a service that never looks ready is stopped',
    },
  } satisfies Record<ServiceField, FieldTrust>,
} as const satisfies Record<
  {
    [K in keyof typeof CONFIG_TRUST]: (typeof CONFIG_TRUST)[K] extends 'commands' ? K : never;
  }[keyof typeof CONFIG_TRUST],
  Record<string, FieldTrust>
>;
