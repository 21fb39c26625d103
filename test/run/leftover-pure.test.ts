import { describe, expect, it } from 'vitest';
import { buildAgentInvocation } from '../../src/run/agents.js';
import { configSchema } from '../../src/config/schema.js';
import { containedArgv } from '../../src/system/containment.js';
import { isAgentOwn, leftoversIn } from '../../src/run/leftovers.js';
import { sandboxArgv, type SandboxProfile } from '../../src/run/sandbox.js';
import type { TreeProcess } from '../../src/system/proc.js';

/**
 * What an agent left running, told from the agent itself (src/run/leftovers.ts), on process
 * trees as /proc shows them. Issue 39: every real Claude run was said to have left
 * "sh, claude" — the namespace's init and claude itself, still finishing after its Stop hook.
 */

let nextPid = 100;
function proc(comm: string, cmdline: string[], children: TreeProcess[] = []): TreeProcess {
  return { pid: nextPid++, comm, cmdline, children };
}

const names = (tree: TreeProcess[], argv: readonly string[]): string[] => leftoversIn(tree, argv).map((p) => p.comm);

const claude = buildAgentInvocation(configSchema.parse({}), 'claude', {
  prompt: 'start the dev server',
  promptFile: '/w/prompt.txt',
  home: '/w/home',
  resume: null,
  sandboxed: false,
}).argv;

/** The command lines of the wrappers warren puts around `argv` (setpriv execs into unshare, the tree's root). */
function initOf(argv: readonly string[]): string[] {
  const full = containedArgv({ kind: 'pid-namespace', reason: 'test' }, argv, false);
  return full.slice(full.indexOf('sh'));
}

const profile: SandboxProfile = {
  kind: 'bwrap',
  network: false,
  allow: null,
  masked: ['/root'],
  readable: [],
  writable: ['/w/ws'],
  pinned: [],
};

describe('leftoversIn', () => {
  it("names nothing while claude is only finishing: the namespace's init and claude itself are its own", () => {
    const tree = [proc('sh', initOf(claude), [proc('claude', [...claude])])];
    expect(names(tree, claude)).toEqual([]);
  });

  it('names the background shell and its sleep, never claude or its init', () => {
    const bash = proc('bash', ['/bin/bash', '-c', "eval 'sleep 301' < /dev/null"], [proc('sleep', ['sleep', '301'])]);
    const tree = [proc('sh', initOf(claude), [proc('claude', [...claude], [bash])])];
    expect(names(tree, claude)).toEqual(['bash', 'sleep']);
  });

  it('sees through bwrap and its init, and a script run by its interpreter', () => {
    const argv = ['my-agent', '--go'];
    const boxed = sandboxArgv(profile, '/w/ws', argv);
    const agent = proc('node', ['node', '/usr/local/bin/my-agent', '--go'], [proc('npm', ['npm', 'run', 'dev'])]);
    const tree = [proc('bwrap', boxed, [proc('bwrap', boxed, [agent])])];
    expect(names(tree, argv)).toEqual(['npm']);
  });

  it('counts a CLI that starts itself again with other runtime flags as its own', () => {
    const argv = ['gemini', '--skip-trust', '--prompt=hi'];
    const relaunched = proc('node', ['node', '--max-old-space-size=4096', '/opt/gemini/index.js', ...argv.slice(1)]);
    const tree = [proc('node', ['node', '/opt/gemini/index.js', ...argv.slice(1)], [relaunched])];
    expect(names(tree, argv)).toEqual([]);
  });

  it('with no arguments to go by, tells the agent by the name of its command', () => {
    const argv = ['lingering-agent'];
    const agent = proc('lingering-agent', ['/bin/sh', '/tmp/bin/lingering-agent'], [proc('sleep', ['sleep', '300'])]);
    expect(names([proc('sh', initOf(argv), [agent])], argv)).toEqual(['sleep']);
    // Without a wrapper (a process group: the root is the agent), what is under it is what it left.
    expect(names([proc('sleep', ['sleep', '300'])], argv)).toEqual(['sleep']);
  });

  it('keeps a process it cannot read (gone, or hidden) a leftover, and a wrapper above the agent its own', () => {
    const argv = ['claude', '-p'];
    expect(isAgentOwn({ cmdline: [] }, argv)).toBe(false);
    expect(isAgentOwn({ cmdline: ['claude', '-p'] }, argv)).toBe(true);
    expect(isAgentOwn({ cmdline: ['-p'] }, argv)).toBe(false);
    expect(isAgentOwn({ cmdline: ['claude'] }, [])).toBe(false);
    const tree = [proc('mystery', ['some-wrapper'], [proc('claude', ['claude', '-p'], [proc('?', [])])])];
    expect(names(tree, argv)).toEqual(['?']);
  });
});
