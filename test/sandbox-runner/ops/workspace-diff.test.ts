import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkspaceDiffResult } from '../../../sandbox-runner/protocol.ts';
import { MAX_DIFF_BYTES } from '../../../sandbox-runner/ops/workspace-diff-op.ts';
import { expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const bash = (command: string) => ({ type: 'bash' as const, command, timeoutMs: 20_000 });
/** `n` lines of 79 characters: 80·n bytes of text. */
const lines = (n: number, c: string) => `yes ${c.repeat(79)} | head -n ${n}`;

describe('the workspace_diff op', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture();
  });
  afterAll(async () => {
    await fx?.stop();
  });

  it('diffs two older versions read from storage (pack, blobs), flags links and large files, and caps the answer', async () => {
    const id = fx.newWorkspaceId();
    const big = `${Array.from({ length: 400 }, (_, i) => `line ${i}: ${'x'.repeat(60)}`).join('\n')}\n`;
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'big.txt': big, 'f.txt': 'one\n' } }));
    // Version 2: big.txt (over the 16 KiB a delta carries: a blob) edited, a file turned into a
    // link, a file over the diff limit, three large text files whose diffs pass the answer's cap.
    const v2 = expectOk(
      await fx.call(
        id,
        1,
        bash(
          `sed -i 's/^line 200: .*/line 200: changed/' big.txt && rm f.txt && ln -s big.txt f.txt && ${lines(8_000, 'h')} > huge.txt && ` +
            // Distinct bodies: identical large blobs uploaded at once make the SDK log its 412s.
            [1, 2, 3].map((i) => `${lines(5_000, String(i))} > z${i}.txt`).join(' && '),
        ),
      ),
    );
    expect(v2.version).toBe(2);
    expectOk(await fx.call(id, 2, bash('echo later > later.txt')));

    // Another runner, with no copy: both versions come from S3 (from: the first snapshot's pack; to: delta 2 and its blobs).
    const answer = expectOk(await fx.call(id, 3, { type: 'workspace_diff', from: 1, to: 2 }, { runner: 'cold' }));
    const diff = answer.result as WorkspaceDiffResult;
    expect(answer.version).toBe(3);
    expect(diff.files.map((f) => `${f.kind} ${f.path}${f.skipped ? ` (${f.skipped})` : ''}`)).toEqual([
      'modified big.txt',
      'symlink f.txt',
      'added huge.txt (too_large)',
      'added z1.txt',
      'added z2.txt',
      'added z3.txt (size_cap)',
    ]);
    expect(diff.files[0]).toMatchObject({ additions: 1, deletions: 1 });
    expect(diff.files[0]!.diff).toContain(`\n-line 200: ${'x'.repeat(60)}\n+line 200: changed\n`);
    expect(diff.files[1]).toMatchObject({ oldSize: 4, oldMode: 0o644, newTarget: 'big.txt' });
    expect(diff.files[1]!.diff).toBeUndefined();
    expect(diff.files[3]).toMatchObject({ additions: 5_000, deletions: 0 });
    expect(diff).toMatchObject({ from: 1, to: 2, totalFiles: 6, truncated: true });
    expect(diff.diffBytes).toBeGreaterThan(800_000);
    expect(diff.diffBytes).toBeLessThanOrEqual(MAX_DIFF_BYTES);

    // One path alone gets its diff.
    const one = expectOk(await fx.call(id, 3, { type: 'workspace_diff', from: 1, to: 2, paths: ['z3.txt'] }, { runner: 'cold' })).result as WorkspaceDiffResult;
    expect(one).toMatchObject({ totalFiles: 1, truncated: false, files: [{ path: 'z3.txt', kind: 'added', additions: 5_000 }] });

    // The warm copy stayed at version 3: the next call is warm.
    expect(expectOk(await fx.call(id, 3, { type: 'list_files' }, { runner: 'cold' })).sync.mode).toBe('warm');
  });

  it('refuses versions out of order or past the workspace', async () => {
    const id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a\n' } }));
    for (const [from, to] of [
      [1, 0],
      [0, 2],
    ]) {
      const res = await fx.call(id, 1, { type: 'workspace_diff', from: from!, to: to! });
      expect(res).toEqual({
        ok: false,
        error: { kind: 'tool_error', message: `Versions must satisfy from ≤ to ≤ 1 (the workspace's version); got from ${from}, to ${to}.` },
      });
    }
  });
});
