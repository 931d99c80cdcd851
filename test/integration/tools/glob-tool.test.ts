import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

describe('Glob through the runner', () => {
  const h = useToolStack();
  const files: Record<string, string> = {
    'src/a.ts': 'a',
    'src/c.ts': 'c',
    '.hidden/h.ts': 'h',
    '.gitignore': 'ignored.ts\n',
    'ignored.ts': 'i',
    '.git/config': 'x',
    'README.md': '#',
  };
  for (let i = 0; i < 105; i++) files[`many/f${String(i).padStart(3, '0')}.txt`] = 'x';
  const sorted = (text: unknown) => String(text).split('\n').sort();

  it('lists hidden and ignored files relative to the cwd, caps at 100 and reports path errors', async () => {
    const r = await h.run(files, [
      [
        call('g1', 'Glob', { pattern: '**/*.ts' }),
        call('g2', 'Glob', { pattern: '*.nothing' }),
        call('g3', 'Glob', { pattern: '**/*.txt' }),
        call('g4', 'Glob', { pattern: '*.ts', path: '/workspace/src' }),
        call('g5', 'Glob', { pattern: '*', path: '/workspace/nope' }),
        call('g6', 'Glob', { pattern: '*', path: '/workspace/README.md' }),
        call('g7', 'Glob', { pattern: '**/config' }),
        call('g8', 'Glob', { pattern: '/workspace/src/*.ts' }),
      ],
    ]);
    expect(r.g1!.is_error).toBe(false);
    expect(sorted(r.g1!.content)).toEqual(['.hidden/h.ts', 'ignored.ts', 'src/a.ts', 'src/c.ts']);
    expect(r.g2).toMatchObject(ok('No files found'));
    const g3 = String(r.g3!.content).split('\n');
    expect(g3).toHaveLength(101);
    expect(g3.at(-1)).toBe('(Results are truncated. Consider using a more specific path or pattern.)');
    expect(sorted(r.g4!.content)).toEqual(['src/a.ts', 'src/c.ts']);
    expect(r.g5).toMatchObject(
      err('<tool_use_error>Directory does not exist: /workspace/nope. Note: your current working directory is /workspace.</tool_use_error>'),
    );
    expect(r.g6).toMatchObject(err('<tool_use_error>Path is not a directory: /workspace/README.md</tool_use_error>'));
    expect(r.g7).toMatchObject(ok('.git/config'));
    expect(sorted(r.g8!.content)).toEqual(['src/a.ts', 'src/c.ts']);
  });

  it('relativises to the cwd the Bash tool left behind', async () => {
    const sessionId = await h.session({ 'src/a.ts': 'a', 'lib/b.ts': 'b' });
    const lines = await h.turn(sessionId, [
      [call('c1', 'Bash', { command: 'cd src' })],
      [call('c2', 'Glob', { pattern: '**/*.ts', path: '/workspace/lib' }), call('c3', 'Glob', { pattern: '*.ts' })],
    ]);
    expect(lines.slice(1)).toEqual([
      { id: 'c2', is_error: false, content: '/workspace/lib/b.ts' },
      { id: 'c3', is_error: false, content: 'a.ts' },
    ]);
  });
});
