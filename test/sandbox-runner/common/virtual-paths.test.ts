import { describe, expect, it } from 'vitest';
import { createPathMapper, isInsideWorkspace } from '../../../sandbox-runner/common/virtual-paths.ts';

describe('isInsideWorkspace', () => {
  it('accepts /workspace, paths under it, and relative paths that stay in it', () => {
    for (const p of ['/workspace', '/workspace/', '/workspace/a/b.txt', '/workspace/a/../b', '/workspace/./x', 'src/a.ts', '.', 'a/../b']) {
      expect(isInsideWorkspace(p), p).toBe(true);
    }
  });

  it('refuses paths that leave it, and siblings that only share its prefix', () => {
    for (const p of ['/', '/etc/passwd', '/workspace2', '/workspace-other/x', '/workspace/../etc', '..', '../x', 'a/../../b', '/tmp']) {
      expect(isInsideWorkspace(p), p).toBe(false);
    }
  });

  it('is the test the runner maps paths with: inside ones map to the real root, others are refused', () => {
    const paths = createPathMapper('/data/copy');
    expect(paths.isInside('/workspace/../etc')).toBe(false);
    expect(paths.toReal('/workspace')).toBe('/data/copy');
    expect(paths.toReal('src/a.ts')).toBe('/data/copy/src/a.ts');
    expect(() => paths.toReal('/workspace2/x')).toThrow('Path /workspace2/x is outside /workspace');
  });
});
