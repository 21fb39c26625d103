/**
 * The conflicting hunks of a file as git wrote it with conflict markers (the tree of a
 * conflicted `merge-tree`): each hunk's two sides, the merge base's lines when the repository
 * asks for them (`merge.conflictStyle=diff3`/`zdiff3`), and the line the hunk starts at in the
 * merged file. Markers of another size (`conflict-marker-size` in .gitattributes) are not read:
 * the file is then reported without hunks. Pure.
 */

export interface ConflictHunk {
  /** 1-based line of the `<<<<<<<` marker in the merged file. */
  line: number;
  ours: string[];
  /** The merge base's lines, when git wrote them (diff3), else null. */
  base: string[] | null;
  theirs: string[];
}

type Section = 'outside' | 'ours' | 'base' | 'theirs';

const MARK = { open: '<<<<<<< ', base: '||||||| ', split: '=======', close: '>>>>>>> ' } as const;

const is = (line: string, mark: string): boolean =>
  mark === MARK.split ? line === mark || line.startsWith(`${mark} `) : line.startsWith(mark) || line === mark.trim();

export function parseConflictHunks(text: string): ConflictHunk[] {
  const hunks: ConflictHunk[] = [];
  let section: Section = 'outside';
  let current: ConflictHunk | null = null;
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (section === 'outside') {
      if (is(line, MARK.open)) {
        current = { line: i + 1, ours: [], base: null, theirs: [] };
        section = 'ours';
      }
      continue;
    }
    if (!current) continue;
    if (section === 'ours' && is(line, MARK.base)) {
      current.base = [];
      section = 'base';
    } else if ((section === 'ours' || section === 'base') && is(line, MARK.split)) {
      section = 'theirs';
    } else if (section === 'theirs' && is(line, MARK.close)) {
      hunks.push(current);
      current = null;
      section = 'outside';
    } else if (section === 'ours') current.ours.push(line);
    else if (section === 'base') current.base?.push(line);
    else current.theirs.push(line);
  }
  return hunks;
}
