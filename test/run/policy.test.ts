import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, tmpDir } from '../helpers/repo.js';

/** The signed run policy: verified before anything is spawned; a marker file proves nothing ran. */

const POLICY = (expires: string, sandboxes: string) =>
  `version: 1\nexpires: "${expires}"\nrules:\n  - { tasks: "*", sandbox: [${sandboxes}], network: false }\n`;

describe('warren policy', () => {
  it(
    'unsigned, tampered, expired, foreign-key and disallowing policies refuse the run before any process starts',
    { timeout: 180_000 },
    async () => {
      const repo = makeRepo();
      const marks = tmpDir('warren-marks-');
      expect((await repo.warren('new', 'feat', 'p1')).code).toBe(0);
      const policyFile = path.join(repo.root, 'warren.policy.yaml');
      let n = 0;
      const tryRun = async (): Promise<{
        code: number;
        error?: { code: string; message: string };
        marker: boolean;
      }> => {
        const marker = path.join(marks, `m${++n}`);
        // The policy file is in the set the user trusts (by its sha256): each version here is trusted
        // as `warren trust` would, so what refuses the run is the policy's own check.
        repo.trust();
        const r = await repo.warrenJson<{ error?: { code: string; message: string } }>(
          'exec',
          'p1',
          '--',
          'touch',
          marker,
        );
        return { code: r.code, ...(r.json.error ? { error: r.json.error } : {}), marker: fs.existsSync(marker) };
      };

      const keys = await repo.warrenJson<{ privateKey: string; publicKey: string }>('policy', 'keygen');
      expect(keys.code).toBe(0);
      expect(fs.statSync(keys.json.privateKey).mode & 0o777).toBe(0o600);

      // A trusted key but no policy file: refused.
      const noFile = await tryRun();
      expect(noFile).toMatchObject({ code: 1, error: { code: 'POLICY_INVALID' }, marker: false });

      fs.writeFileSync(policyFile, POLICY('2099-01-01T00:00:00Z', 'none, bwrap'));
      const unsigned = await tryRun();
      expect(unsigned).toMatchObject({ code: 1, marker: false });
      expect(unsigned.error?.message).toContain('is not signed');

      expect((await repo.warren('policy', 'sign', policyFile)).code).toBe(0);
      const verified = await repo.warrenJson<{ valid: boolean }>('policy', 'verify');
      expect(verified.json.valid).toBe(true);
      expect(await tryRun()).toMatchObject({ code: 0, marker: true });

      // Tampered: one byte added after signing.
      fs.appendFileSync(policyFile, '#');
      const tampered = await tryRun();
      expect(tampered).toMatchObject({ code: 1, error: { code: 'POLICY_INVALID' }, marker: false });
      expect(tampered.error?.message).toContain('does not match its signature');
      expect((await repo.warren('policy', 'verify')).code).toBe(1);

      fs.writeFileSync(policyFile, POLICY('2020-01-01T00:00:00Z', 'none'));
      await repo.warren('policy', 'sign', policyFile);
      const expired = await tryRun();
      expect(expired).toMatchObject({ code: 1, marker: false });
      expect(expired.error?.message).toContain('expired');

      fs.writeFileSync(policyFile, POLICY('2099-01-01T00:00:00Z', 'bwrap'));
      await repo.warren('policy', 'sign', policyFile);
      const disallowed = await tryRun();
      expect(disallowed).toMatchObject({ code: 1, marker: false });
      expect(disallowed.error?.message).toContain('only with sandbox bwrap');

      // Signed by a key that is no longer the trusted one.
      fs.writeFileSync(policyFile, POLICY('2099-01-01T00:00:00Z', 'none'));
      await repo.warren('policy', 'sign', policyFile);
      expect((await repo.warren('policy', 'keygen')).code).toBe(1);
      expect((await repo.warren('policy', 'keygen', '--force')).code).toBe(0);
      const foreign = await tryRun();
      expect(foreign).toMatchObject({ code: 1, marker: false });
      expect(foreign.error?.message).toContain('does not match its signature');
    },
  );

  it('a policy file without a trusted key is refused too', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'p2')).code).toBe(0);
    fs.writeFileSync(path.join(repo.root, 'warren.policy.yaml'), POLICY('2099-01-01T00:00:00Z', 'none'));
    repo.trust();
    const marker = path.join(tmpDir(), 'm');
    const r = await repo.warrenJson<{ error: { code: string; message: string } }>('exec', 'p2', '--', 'touch', marker);
    expect(r.code).toBe(1);
    expect(r.json.error.message).toContain('no trusted key');
    expect(fs.existsSync(marker)).toBe(false);
  });
});
