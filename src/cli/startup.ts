/** What the command line decides before its code has loaded (src/cli/bin.ts): pure, so it is tested directly. */

/**
 * The folder a command will look for its repository in (`--repo DIR`, else the current one),
 * or null for what never opens one (no command, help, the version, completion scripts). A
 * guess: a wrong one only means the answer is not taken (it is keyed by the folder).
 */
export function repositoryGuess(args: readonly string[], cwd: string): string | null {
  const first = args.find((a) => !a.startsWith('-'));
  if (first === undefined || first === 'help' || first === 'completion') return null;
  if (args.some((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V')) return null;
  let dir = cwd;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') break;
    if (arg === '--repo' && args[i + 1] !== undefined) dir = args[i + 1] ?? dir;
    else if (arg.startsWith('--repo=')) dir = arg.slice('--repo='.length);
  }
  return dir;
}
