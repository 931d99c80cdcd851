import { describe, expect, it } from 'vitest';
import { runRipgrep } from '../../../../sandbox-runner/ops/files/ripgrep.ts';

describe('the ripgrep runner', () => {
  it('reports a search that does not finish as a timeout error, never as no matches', async () => {
    // /dev/zero never ends, so the search can only stop by being killed.
    await expect(runRipgrep(['needle', '/dev/zero'], { cwd: '/', timeoutMs: 200 })).rejects.toThrow(
      'Ripgrep search timed out after 0 seconds. The search may have matched files but did not complete in time. Try searching a more specific path or pattern.',
    );
  });

  it('returns no lines for no matches and for a pattern ripgrep rejects', async () => {
    expect(await runRipgrep(['needle-that-is-not-there', '/etc/hostname'], { cwd: '/' })).toEqual([]);
    expect(await runRipgrep(['(', '/etc/hostname'], { cwd: '/' })).toEqual([]);
  });
});
