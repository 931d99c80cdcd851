import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyProblem, MAX_KEY_BYTES, MAX_SEED_JSON_BYTES, seedFilesProblem } from '../../../sandbox-runner/common/file-keys.ts';
import { expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

describe('file keys: one rule for the API and the runner', () => {
  it('accepts plain relative paths and names why others are refused', () => {
    for (const ok of ['a.txt', 'src/main.ts', 'é/ü 😀.txt', '.hidden/.x', '...', `${'n'.repeat(255)}/x`]) expect(keyProblem(ok)).toBeUndefined();
    const refused: [string, RegExp][] = [
      ['', /empty/],
      ['a\0b', /NUL/],
      ['/etc/passwd', /absolute/],
      ['../x', /"\.\." component/],
      ['a/../../x', /"\.\." component/],
      ['a/./b', /"\." component/],
      ['.', /"\." component/],
      ['a//b', /empty component/],
      ['a/', /empty component/],
      ['\ud800.txt', /unpaired surrogate/],
      ['n'.repeat(256), /256 bytes long; at most 255 are allowed per component/],
      ['é'.repeat(128), /256 bytes long; at most 255/],
      [`${'d'.repeat(200)}/`.repeat(16).concat('f'), new RegExp(`at most ${MAX_KEY_BYTES} are allowed`)],
    ];
    for (const [key, why] of refused) expect(keyProblem(key), JSON.stringify(key)).toMatch(why);
  });

  it('refuses seeds that cannot become one tree, bad base64 and too much content', () => {
    expect(seedFilesProblem({ 'a.txt': 'x', 'd/e.bin': { base64: 'AAEC' } })).toBeUndefined();
    expect(seedFilesProblem({ d: 'x', 'd/y': 'y' })).toEqual({ kind: 'invalid', message: '"d" cannot be a file and also the directory of "d/y".' });
    expect(seedFilesProblem({ 'a/b/c': 'x', 'a/b': 'y' })?.message).toBe('"a/b" cannot be a file and also the directory of "a/b/c".');
    expect(seedFilesProblem({ b: { base64: '!!!' } })).toEqual({ kind: 'invalid', message: 'The content of "b" is not valid base64.' });
    const big = seedFilesProblem({ big: 'x'.repeat(MAX_SEED_JSON_BYTES) });
    expect(big?.kind).toBe('too_large');
    expect(big?.message).toContain(`at most ${MAX_SEED_JSON_BYTES} are accepted`);
  });

  describe('the runner applies them too', () => {
    let fx: RunnerFixture;
    beforeAll(async () => {
      fx = await startRunnerFixture();
    });
    afterAll(async () => {
      await fx?.stop();
    });

    it('refuses bad seeds as a tool error, before writing anything', async () => {
      const bad: Record<string, string>[] = [{ d: 'x', 'd/y': 'y' }, { 'a\0b': 'x' }, { 'a//b': 'x' }, { ['n'.repeat(300)]: 'x' }];
      for (const files of bad) {
        const id = fx.newWorkspaceId();
        const response = await fx.call(id, 0, { type: 'create_workspace', files });
        expect(response).toMatchObject({ ok: false, error: { kind: 'tool_error', message: seedFilesProblem(files)!.message } });
        // Nothing was published: the workspace can still be created.
        expect(expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'ok.txt': 'ok' } })).version).toBe(1);
      }
    });

    it('refuses an export path outside the rules instead of normalising it', async () => {
      const id = fx.newWorkspaceId();
      expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a/b.txt': 'b' } }));
      const dotted = await fx.call(id, 1, { type: 'export_file', path: 'a/../a/b.txt' });
      expect(dotted).toMatchObject({
        ok: false,
        error: { kind: 'tool_error', message: 'Invalid file path "a/../a/b.txt": it contains a ".." component; use a path inside the workspace.' },
      });
      const fine = expectOk(await fx.call(id, 1, { type: 'export_file', path: 'a/b.txt' }));
      expect(fine.result).toMatchObject({ type: 'export_file', path: 'a/b.txt', size: 1 });
    });
  });
});
