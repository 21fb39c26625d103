// What an action reports, as lines a person reads: each library result's own shape, and a
// plain `key: value` rendering (never raw JSON) for anything else.
import { duration } from './dom.js';

const short = (sha) => (typeof sha === 'string' ? sha.slice(0, 12) : '');

/** One setup/verify command's result: `test: failed (exit 1, 2.1s) — why`. */
function stepLine(r) {
  const outcome = r.timedOut
    ? 'timed out'
    : r.exitCode === 0
      ? 'passed'
      : r.exitCode === null
        ? 'did not run to the end'
        : 'failed';
  const facts = [
    typeof r.exitCode === 'number' ? `exit ${r.exitCode}` : null,
    typeof r.durationMs === 'number' ? duration(r.durationMs) : null,
    r.required === false ? 'optional' : null,
  ].filter(Boolean);
  return `${r.id}: ${outcome}${facts.length ? ` (${facts.join(', ')})` : ''}${r.reason ? ` — ${r.reason}` : ''}`;
}

/** A value as text: lists joined, objects as `key value` pairs, nested ones flattened. */
export function plain(v) {
  if (v === null || v === undefined) return '—';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map(plain).join(', ');
  if (typeof v === 'object')
    return Object.entries(v)
      .map(([k, x]) => `${k} ${plain(x)}`)
      .join(', ');
  return String(v);
}

/** The lines of the toast for an action's result. */
export function resultLines(result) {
  if (!result || typeof result !== 'object') return [];
  // gc: what it removed and what it kept, with why.
  if (Array.isArray(result.removed) && Array.isArray(result.kept)) {
    const lines = [
      ...result.removed.map((r) => `removed ${r.kind} ${r.path ?? r.branch ?? ''}${r.id ? ` (${r.id})` : ''}`),
      ...result.kept.map((k) => `kept ${k.kind} ${k.path}: ${k.reason}`),
    ];
    return lines.length ? lines : ['nothing to collect'];
  }
  // A new task (alone, or with the agent started in it): where it is, then every warning recorded while making it.
  if (Array.isArray(result.warnings) && typeof result.branch === 'string' && typeof result.path === 'string') {
    return [
      `${result.state}: ${result.branch} at ${result.path}`,
      ...(result.run ? resultLines(result.run) : []),
      ...result.warnings.map((w) => `${w.level}: ${w.message}`),
    ];
  }
  // An agent started.
  if (typeof result.agent === 'string' && 'started' in result) {
    return [
      result.started
        ? `${result.agent} started in task ${result.id} (run ${result.runId}); its conversation shows below as it goes`
        : `${result.agent} has not started in task ${result.id} yet; the task's events will say when it does`,
    ];
  }
  // verify: passed or failed, then each command.
  if (Array.isArray(result.results) && typeof result.passed === 'boolean') {
    return [
      result.results.length === 0 ? 'no verify commands in warren.yaml' : result.passed ? 'passed' : 'failed',
      ...result.results.map(stepLine),
      ...(result.log ? [`log ${result.log}`] : []),
    ];
  }
  // checkpoint.
  if (typeof result.nothingToCommit === 'boolean' && typeof result.head === 'string') {
    return [
      result.nothingToCommit
        ? `nothing to commit; ${result.branch} is at ${short(result.head)}`
        : `committed ${short(result.commit)} on ${result.branch}`,
      ...result.unstaged.map((p) => `took ${p} back out of the index (a provisioned path)`),
      ...result.warnings.map((w) => `warn: ${w}`),
    ];
  }
  // land, through the merge queue.
  if (result.state === 'queued' && typeof result.position === 'number')
    return [`joined the merge queue at position ${result.position}; the queue lands it once its gate passes`];
  if (result.state === 'landed' && typeof result.commit === 'string') return [`landed as ${short(result.commit)}`];
  // rm.
  if (result.removed === true && typeof result.id === 'string') {
    return [
      `removed task ${result.id}${result.folderMissing ? ' (its folder was already gone)' : ''}`,
      result.branchDeleted
        ? `deleted branch ${result.branch}`
        : `kept branch ${result.branch}${result.unlandedCommits ? ` (${result.unlandedCommits} commit(s) not on the base)` : ''}`,
      ...(result.archive
        ? [`saved everything under ${result.archive} (\`warren restore ${result.id}\` brings it back)`]
        : []),
    ];
  }
  // Remove landed tasks: each removed with where its work was saved, each refused with why.
  if (Array.isArray(result.removedLanded) && Array.isArray(result.refused)) {
    const lines = [
      ...result.removedLanded.map((r) => `removed ${r.id}${r.archive ? `; saved under ${r.archive}` : ''}`),
      ...result.refused.map((r) => `kept ${r.id}: ${r.code} ${r.message}`),
    ];
    return lines.length ? lines : ['no landed tasks'];
  }
  // trust.
  if (typeof result.trusted === 'boolean' && Array.isArray(result.commands)) {
    return [`trusted ${result.commands.length} command(s) and setting(s) (sha256 ${short(result.hash)})`];
  }
  return Object.entries(result).map(([k, v]) => `${k}: ${plain(v)}`);
}
