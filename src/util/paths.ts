import path from 'node:path';

/** Is `child` the same as or below `parent`? Both must already be canonical. Pure. */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel) && rel !== '..');
}

export function isStrictlyInside(parent: string, child: string): boolean {
  return child !== parent && isInside(parent, child);
}
