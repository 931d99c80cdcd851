import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

describe('Grep through the runner', () => {
  const h = useToolStack();
  const files: Record<string, string> = {
    'src/a.ts': 'const a = 1;\nexport function foo() {}\n',
    'src/b.js': '// foo\nvar b = -foo;\n',
    'src/c.ts': 'FOO\nbar\nfoo bar\nbaz\n',
    '.hidden/h.ts': 'foo\n',
    '.git/config': 'foo\n',
    'long.txt': `foo${'x'.repeat(600)}\n`,
  };
  for (let i = 0; i < 5; i++) files[`many/f${i}.txt`] = 'x\n';
  const lines = (text: unknown) => String(text).split('\n').sort();

  it('files_with_matches, content and count modes, with the VCS dirs excluded and long lines omitted', async () => {
    const r = await h.run(files, [
      [
        call('r1', 'Grep', { pattern: 'foo' }),
        call('r2', 'Grep', { pattern: 'foo', output_mode: 'content' }),
        call('r3', 'Grep', { pattern: 'foo', output_mode: 'count' }),
        call('r4', 'Grep', { pattern: 'zzzz' }),
        call('r5', 'Grep', { pattern: 'zzz', output_mode: 'content' }),
        call('r6', 'Grep', { pattern: 'zzz', output_mode: 'count' }),
        call('r7', 'Grep', { pattern: 'foo', path: '/workspace/src/c.ts' }),
      ],
    ]);
    const r1 = String(r.r1!.content).split('\n');
    expect(r1[0]).toBe('Found 5 files');
    expect(r1.slice(1).sort()).toEqual(['.hidden/h.ts', 'long.txt', 'src/a.ts', 'src/b.js', 'src/c.ts']);
    expect(lines(r.r2!.content)).toEqual([
      '.hidden/h.ts:1:foo',
      'long.txt:1:[Omitted long matching line]',
      'src/a.ts:2:export function foo() {}',
      'src/b.js:1:// foo',
      'src/b.js:2:var b = -foo;',
      'src/c.ts:3:foo bar',
    ]);
    const [counts, summary] = String(r.r3!.content).split('\n\n');
    expect(lines(counts)).toEqual(['.hidden/h.ts:1', 'long.txt:1', 'src/a.ts:1', 'src/b.js:2', 'src/c.ts:1']);
    expect(summary).toBe('Found 6 total occurrences across 5 files.');
    expect(r.r4).toMatchObject(ok('No files found'));
    expect(r.r5).toMatchObject(ok('No matches found'));
    expect(r.r6).toMatchObject(ok('No matches found\n\nFound 0 total occurrences across 0 files.'));
    expect(r.r7).toMatchObject(ok('Found 1 file\nsrc/c.ts'));
  });

  it('case, context, line numbers, type, glob, multiline and leading-dash patterns', async () => {
    const r = await h.run(files, [
      [
        call('o1', 'Grep', { pattern: 'foo', '-i': true, output_mode: 'content', path: '/workspace/src/c.ts' }),
        call('o2', 'Grep', { pattern: '-foo', output_mode: 'content' }),
        call('o3', 'Grep', { pattern: 'bar', '-C': 1, output_mode: 'content', path: '/workspace/src/c.ts' }),
        call('o4', 'Grep', { pattern: 'foo', type: 'js', output_mode: 'content', '-n': false }),
        call('o5', 'Grep', { pattern: 'a = 1;\\nexport', multiline: true, output_mode: 'content' }),
        call('o6', 'Grep', { pattern: 'foo', glob: '*.{js,md}' }),
        call('o7', 'Grep', { pattern: 'bar', '-A': 1, '-B': 2, output_mode: 'content', path: '/workspace/src' }),
        call('o8', 'Grep', { pattern: 'foo', path: '/workspace/nope' }),
      ],
    ]);
    expect(r.o1).toMatchObject(ok('src/c.ts:1:FOO\nsrc/c.ts:3:foo bar'.replaceAll('src/c.ts:', '')));
    expect(r.o2).toMatchObject(ok('src/b.js:2:var b = -foo;'));
    expect(r.o3).toMatchObject(ok('1-FOO\n2:bar\n3:foo bar\n4-baz'));
    expect(r.o4).toMatchObject(ok('src/b.js:// foo\nsrc/b.js:var b = -foo;'));
    expect(r.o5).toMatchObject(ok('src/a.ts:1:const a = 1;\nsrc/a.ts:2:export function foo() {}'));
    expect(r.o6).toMatchObject(ok('Found 1 file\nsrc/b.js'));
    // Context lines keep ripgrep's absolute path: only `path:` prefixes are relativised (as in the reference).
    expect(r.o7).toMatchObject(ok('/workspace/src/c.ts-1-FOO\nsrc/c.ts:2:bar\nsrc/c.ts:3:foo bar\n/workspace/src/c.ts-4-baz'));
    expect(r.o8).toMatchObject(
      err('<tool_use_error>Path does not exist: /workspace/nope. Note: your current working directory is /workspace.</tool_use_error>'),
    );
  });

  it('head_limit (default 250, 0 = all) and offset, with the pagination notes', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 260; i++) many[`m/f${String(i).padStart(3, '0')}.txt`] = 'x\n';
    const r = await h.run(many, [
      [
        call('p1', 'Grep', { pattern: 'x', path: '/workspace/m', output_mode: 'content', head_limit: 3 }),
        call('p2', 'Grep', { pattern: 'x', path: '/workspace/m', head_limit: 3, offset: 2 }),
        call('p3', 'Grep', { pattern: 'x', path: '/workspace/m', output_mode: 'count', head_limit: 2 }),
        call('p4', 'Grep', { pattern: 'x', path: '/workspace/m' }),
        call('p5', 'Grep', { pattern: 'x', path: '/workspace/m', head_limit: 0 }),
        call('p6', 'Grep', { pattern: 'x', path: '/workspace/m', offset: 258 }),
      ],
    ]);
    expect(String(r.p1!.content)).toMatch(/^m\/f\d{3}\.txt:1:x\nm\/f\d{3}\.txt:1:x\nm\/f\d{3}\.txt:1:x\n\n\[Showing results with pagination = limit: 3\]$/);
    expect(String(r.p2!.content)).toMatch(/^Found 3 files limit: 3, offset: 2\n/);
    expect(String(r.p3!.content)).toMatch(/\n\nFound 2 total occurrences across 2 files\. with pagination = limit: 2$/);
    expect(String(r.p4!.content)).toMatch(/^Found 250 files limit: 250\n/);
    expect(String(r.p5!.content).split('\n')).toHaveLength(261);
    expect(String(r.p6!.content)).toMatch(/^Found 2 files offset: 258\n/);
  });
});
