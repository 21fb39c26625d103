import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { claimPlace } from '../../src/run/k8s/ledger.js';
import { packHere, podValues, safeRelative, stateFolders, unpackHere } from '../../src/run/k8s/state-folders.js';
import { AGENT_CLI_BIN, unavailable } from '../helpers/capabilities.js';
import { pointAt } from '../helpers/agent-cli.js';
import { startTestCluster, type K8sServer } from '../helpers/k8s-server.js';
import { COMMAND, FINAL, NOTE, sendsToolResults, startModelServer } from '../helpers/model-server.js';
import { makeRepo, runCli, tmpDir, type CliResult } from '../helpers/repo.js';

/**
 * A real agent CLI (claude, test/agent-clis) in a `runner: k8s:NAME` task: `warren run` through
 * the runner seam into the claimed pod of the loopback API server (test/helpers/k8s-server.ts,
 * whose sandboxes are podman containers of the container runner's image, with the CLI installed
 * in the image's /usr/local/bin), against the scripted model server on the host's loopback. The
 * agent's state folder is carried into the pod and back (src/run/k8s/state-folders.ts): its
 * transcript is read here by `warren transcript` as a local run's. The whole life of the task:
 * new → run → checkpoint → land → rm, the claim deleted at the end.
 */
const skip = unavailable(import.meta.filename, 'podman') ?? unavailable(import.meta.filename, 'claude-cli');

/** Where the image has the CLIs' packages, and the claude binary in it. */
const POD_CLIS = '/opt/agent-clis';

let server: K8sServer;

describe.skipIf(skip !== null)('a real agent CLI in a Kubernetes task (loopback API server)', () => {
  beforeAll(async () => {
    const modules = fs.realpathSync(path.dirname(AGENT_CLI_BIN));
    const claude = path.relative(modules, fs.realpathSync(path.join(AGENT_CLI_BIN, 'claude')));
    server = await startTestCluster({
      image: { folders: { [POD_CLIS]: modules }, bin: { claude: path.posix.join(POD_CLIS, claude) } },
    });
  }, 300_000);

  afterAll(async () => {
    await server?.close();
  }, 120_000);

  it(
    'claude: new → run → checkpoint → land → rm, the edit made in the pod, its transcript followed here while it runs, the claim deleted',
    { timeout: 600_000 },
    async () => {
      // The final answer is held back until the transcript here shows the turn's tool call: the
      // agent's folder comes back while it runs, not only at its end (90 s at most, then it is answered).
      let seenLive = false;
      const model = await startModelServer({
        hold: (request) => (sendsToolResults(request.body) && !seenLive ? transcriptShowsTool() : undefined),
      });
      onTestFinished(() => model.close());
      const transcriptShowsTool = async (): Promise<void> => {
        for (const until = Date.now() + 90_000; Date.now() < until; await new Promise((r) => setTimeout(r, 1000))) {
          const t = await w('--json', 'transcript', 'a');
          const items =
            t.code === 0 ? (JSON.parse(t.stdout) as { items: { kind: string; input?: string }[] }).items : [];
          if (items.some((i) => i.kind === 'tool' && (i.input ?? '').includes(COMMAND))) {
            seenLive = true;
            return;
          }
        }
      };
      const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'runner: k8s:loop\n' } });
      fs.mkdirSync(repo.home, { recursive: true });
      fs.writeFileSync(
        path.join(repo.home, 'config.yaml'),
        `clusters:\n  loop:\n    kubeconfig: ${server.kubeconfig}\n    namespace: default\n    replicas: 1\n`,
      );
      const userHome = tmpDir('warren-k8s-claude-user-');
      const env = {
        PATH: `${AGENT_CLI_BIN}:${process.env.PATH ?? ''}`,
        HOME: userHome,
        CLAUDE_CONFIG_DIR: '',
        ...pointAt('claude', model, userHome),
      };
      // The user's settings, seeded into the task's state folder here and carried into the pod with it.
      fs.mkdirSync(path.join(userHome, '.claude'));
      fs.writeFileSync(path.join(userHome, '.claude', 'settings.json'), '{"cleanupPeriodDays": 31}\n');
      const w = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo.root, home: repo.home, env });
      const made = await w('--json', 'new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      const ws = (JSON.parse(made.stdout) as { path: string }).path;
      const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
      const { name: claim } = claimPlace(repo.home, project, 'a');

      const run = await w('--json', 'run', 'a', '--agent', 'claude', '--prompt', 'Write the note.', '--timeout', '5m');
      const ran = JSON.parse(run.stdout) as { exitCode: number; log: string; sandbox: string; session: string };
      expect(run.code, `${run.stderr}\n${fs.existsSync(ran.log) ? fs.readFileSync(ran.log, 'utf8') : ''}`).toBe(0);
      expect(ran.sandbox).toBe('k8s:loop');
      // The run's record here: its log holds the agent's answer, streamed from the pod.
      expect(fs.readFileSync(ran.log, 'utf8')).toContain(FINAL);
      // The model's edit and command, made in the pod's clone, brought back to the workspace here.
      expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
      expect(fs.readFileSync(path.join(ws, 'ran-in.txt'), 'utf8')).toBe('/work/task\n');
      expect(model.received.some((r) => r.answer === 'final')).toBe(true);
      expect(seenLive).toBe(true);
      // The agent's state folder came back: its transcript names the run's tool calls.
      const transcript = await w('--json', 'transcript', 'a');
      expect(transcript.code, transcript.stderr).toBe(0);
      const conv = JSON.parse(transcript.stdout) as {
        session: string;
        file: string | null;
        items: { kind: string; input?: string }[];
      };
      expect(conv.session).toBe(ran.session);
      expect(conv.file).toContain(path.join(repo.home, 'logs'));
      expect(conv.items.some((i) => i.kind === 'tool' && (i.input ?? '').includes(COMMAND))).toBe(true);
      expect(server.objects('sandboxclaims').map((c) => c.metadata.name)).toContain(claim);
      const seeded = await w('exec', 'a', '--', 'sh', '-c', 'cat /work/state/claude-*/settings.json');
      expect(seeded.stdout, seeded.stderr).toContain('"cleanupPeriodDays": 31');

      expect((await w('checkpoint', 'a', '-m', 'the note')).code).toBe(0);
      const landed = await w('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(repo.git('show', 'main:agent-note.txt')).toBe(NOTE.trimEnd());
      const removed = await w('rm', 'a');
      expect(removed.code, removed.stderr).toBe(0);
      expect(server.objects('sandboxclaims').map((c) => c.metadata.name)).not.toContain(claim);
    },
  );
});

describe('the folders a run carries to its sandbox and back (src/run/k8s/state-folders.ts)', () => {
  const line = (p: unknown, data: string, m = 0o600): string =>
    `${JSON.stringify({ p, m, d: Buffer.from(data).toString('base64') })}\n`;

  it('what comes back is read as hostile: no path out of the folder, no link followed, a folder not replaced', () => {
    const root = tmpDir('warren-k8s-state-');
    const outside = tmpDir('warren-k8s-outside-');
    fs.mkdirSync(path.join(root, 'projects'));
    fs.symlinkSync(outside, path.join(root, 'linked'));
    fs.mkdirSync(path.join(root, 'a-folder'));
    const refused = unpackHere(
      root,
      Buffer.from(
        [
          line('projects/-work-task/s.jsonl', 'transcript'),
          line('../escape.txt', 'x'),
          line('/etc/owned', 'x'),
          line('projects/./x', 'x'),
          line('', 'x'),
          line('a\0b', 'x'),
          line(7, 'x'),
          line('linked/planted.txt', 'through the link?'),
          line('a-folder', 'x'),
          'not json\n',
        ].join(''),
      ),
    );
    expect(fs.readFileSync(path.join(root, 'projects', '-work-task', 's.jsonl'), 'utf8')).toBe('transcript');
    expect(refused).toHaveLength(8);
    expect(fs.existsSync(path.join(path.dirname(root), 'escape.txt'))).toBe(false);
    // The link is replaced by a real folder; nothing was written where it led.
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.lstatSync(path.join(root, 'linked')).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(root, 'linked', 'planted.txt'), 'utf8')).toBe('through the link?');
    expect(fs.lstatSync(path.join(root, 'a-folder')).isDirectory()).toBe(true);
  });

  it('a folder packed here unpacks the same; links here are not carried', () => {
    const from = tmpDir('warren-k8s-from-');
    fs.mkdirSync(path.join(from, 'sessions', 'x'), { recursive: true });
    fs.writeFileSync(path.join(from, 'settings.json'), '{}');
    fs.writeFileSync(path.join(from, 'sessions', 'x', 'one.jsonl'), 'one\n');
    fs.symlinkSync('/etc/passwd', path.join(from, 'passwd'));
    const to = tmpDir('warren-k8s-to-');
    expect(unpackHere(to, packHere(from))).toEqual([]);
    expect(fs.readFileSync(path.join(to, 'sessions', 'x', 'one.jsonl'), 'utf8')).toBe('one\n');
    expect(fs.readFileSync(path.join(to, 'settings.json'), 'utf8')).toBe('{}');
    expect(fs.existsSync(path.join(to, 'passwd'))).toBe(false);
  });

  it("paths in the run's variables become the pod's; the workspace's own folders are not carried", () => {
    const task = { path: '/w/ws' } as Parameters<typeof stateFolders>[0];
    const folders = stateFolders(task, ['/h/logs/p/a/agents/claude', '/w/ws/sub']);
    expect(folders).toHaveLength(1);
    const pod = folders[0]?.pod ?? '';
    expect(pod).toMatch(/^\/work\/state\/claude-[0-9a-f]{12}$/);
    const places = { folders, tmp: '/h/logs/p/a/tmp', workspace: '/w/ws', podWorkspace: '/work/task' };
    expect(
      podValues(
        {
          CLAUDE_CONFIG_DIR: '/h/logs/p/a/agents/claude',
          INSIDE: '/h/logs/p/a/agents/claude/x.json',
          WARREN_AGENT_DONE: '/h/logs/p/a/tmp/.done',
          FILE: '/w/ws/src/a.ts',
          OTHER: '/usr/bin',
          WORD: 'claude',
        },
        places,
      ),
    ).toEqual({
      CLAUDE_CONFIG_DIR: pod,
      INSIDE: `${pod}/x.json`,
      WARREN_AGENT_DONE: '/tmp/.done',
      FILE: '/work/task/src/a.ts',
      OTHER: '/usr/bin',
      WORD: 'claude',
    });
    expect(safeRelative('a/b')).toEqual(['a', 'b']);
    expect(safeRelative('a//b')).toBeNull();
  });
});
