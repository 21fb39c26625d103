import fs from 'node:fs';

/** The names in a folder, or none when it does not exist or cannot be read (callers treat both as empty). */
export function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
