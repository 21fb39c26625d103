/**
 * Whether `name` is a valid branch name, by the rules of git-check-ref-format(1) for
 * `refs/heads/<name>` plus those `--branch` adds (no leading `-`, not `HEAD`). Pure: `warren
 * new` checks its branch without a git process. test/git/repo-open.test.ts holds it to git's own
 * answer for every rule.
 */
export function isValidBranchName(name: string): boolean {
  if (name === '' || name === 'HEAD' || name.startsWith('-')) return false;
  if (name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  if (name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  for (const ch of name) {
    const code = ch.charCodeAt(0);
    // Control characters, space and DEL, and ~ ^ : ? * [ \
    if (code <= 0x20 || code === 0x7f || '~^:?*[\\'.includes(ch)) return false;
  }
  return name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}
