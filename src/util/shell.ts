/** Pure: one argv as a POSIX shell command line, each word quoted unless it is plainly safe. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
