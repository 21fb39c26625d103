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

/** Longer than any real ref or commit name; a longer `--base` is refused before git sees it. */
export const MAX_BASE_LENGTH = 1024;

/**
 * Whether `name` can name a base: a branch, tag or commit (a valid ref name, or `HEAD`), with
 * an optional `~N` / `^N` suffix. Pure. Anything else is bad input, refused before git runs.
 */
export function isValidBaseRef(name: string): boolean {
  if (name.length === 0 || name.length > MAX_BASE_LENGTH) return false;
  const ref = name.replace(/(?:[~^]\d*)+$/, '');
  return ref === 'HEAD' || isValidBranchName(ref);
}
