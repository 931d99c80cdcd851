import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

// Every expected text and file below is what Claude Code 2.1.88 produced for the same calls
// (scripts/parity-cases/edit-normalise.json and write-normalise.json through parity-reference).
const edit = (id: string, file: string, oldString: string, newString: string, replaceAll?: boolean) => [
  call(id, 'Edit', {
    file_path: `/workspace/${file}`,
    old_string: oldString,
    new_string: newString,
    ...(replaceAll === undefined ? {} : { replace_all: replaceAll }),
  }),
];
const readAll = (files: Record<string, string>) => Object.keys(files).map((f, i) => call(`r${i}`, 'Read', { file_path: `/workspace/${f}` }));
const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('Edit and Write normalise their input as the reference does', () => {
  const h = useToolStack();

  it('deleting with an empty new_string takes the following newline too', async () => {
    const files = {
      'del.txt': 'keep\ndrop\nkeep2\n',
      'all.txt': 'foo\nbar\nend foo',
      'end.txt': 'a\nb',
      'nl.txt': 'a\nb\nc\n',
      'crlf.txt': 'a\r\nb\r\nc\r\n',
      'quote.txt': 'a \u201cb\u201d\nc\n',
    };
    const { results: r, bytes: b } = await h.runAndRead(
      files,
      [
        readAll(files),
        edit('d1', 'del.txt', 'drop', ''),
        edit('d2', 'all.txt', 'foo', '', true),
        edit('d3', 'end.txt', 'b', ''),
        edit('d4', 'nl.txt', 'b\n', ''),
        edit('d5', 'crlf.txt', 'b', ''),
        edit('d6', 'quote.txt', 'a "b"', ''),
      ],
      Object.keys(files),
    );
    for (const id of ['d1', 'd3', 'd4', 'd5', 'd6']) expect(r[id]!.is_error).toBe(false);
    expect(r.d2).toMatchObject(ok('The file /workspace/all.txt has been updated. All occurrences were successfully replaced.'));
    expect(b['del.txt']).toEqual(bytes('keep\nkeep2\n'));
    // With replace_all only the occurrences followed by a newline go; the last "foo" stays.
    expect(b['all.txt']).toEqual(bytes('bar\nend foo'));
    expect(b['end.txt']).toEqual(bytes('a\n'));
    expect(b['nl.txt']).toEqual(bytes('a\nc\n'));
    expect(b['crlf.txt']).toEqual(bytes('a\r\nc\r\n'));
    expect(b['quote.txt']).toEqual(bytes('c\n'));
  });

  it('strips trailing whitespace from new_string outside Markdown, and not when Edit creates the file', async () => {
    const files = { 'ws.txt': 'one\ntwo\n', 'ws.md': 'one\ntwo\n', 'ws.MDX': 'one\ntwo\n', 'empty.txt': '', 'same.txt': 'one\n' };
    const { results: r, bytes: b } = await h.runAndRead(
      files,
      [
        readAll(files),
        edit('w1', 'ws.txt', 'two', 'TWO  \n  three\t'),
        edit('w2', 'ws.md', 'two', 'TWO  \n  three\t'),
        edit('w3', 'ws.MDX', 'two', 'TWO  \n  three\t'),
        edit('w4', 'created.txt', '', 'hi  \nthere \n'),
        edit('w5', 'empty.txt', '', 'x  \ny\u00a0\n'),
        edit('w6', 'same.txt', 'one', 'one   '),
        edit('w7', 'ws.txt', 'TWO', 'T\t'),
      ],
      [...Object.keys(files), 'created.txt'],
    );
    expect(r.w1).toMatchObject(ok('The file /workspace/ws.txt has been updated successfully.'));
    expect(r.w4).toMatchObject(ok('The file /workspace/created.txt has been updated successfully.'));
    expect(r.w5).toMatchObject(ok('The file /workspace/empty.txt has been updated successfully.'));
    // Stripped, the strings are equal, and the reference's first check says so.
    expect(r.w6).toMatchObject(err('<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>'));
    // The file state holds what was written (stripped), so a further edit needs no new Read.
    expect(r.w7).toMatchObject(ok('The file /workspace/ws.txt has been updated successfully.'));
    expect(b['ws.txt']).toEqual(bytes('one\nT\n  three\n'));
    expect(b['ws.md']).toEqual(bytes('one\nTWO  \n  three\t\n'));
    expect(b['ws.MDX']).toEqual(bytes('one\nTWO  \n  three\t\n'));
    expect(b['created.txt']).toEqual(bytes('hi  \nthere \n'));
    expect(b['empty.txt']).toEqual(bytes('x\ny\n'));
    expect(b['same.txt']).toEqual(bytes('one\n'));
  });

  it('restores sanitised tags in old_string when only that form is in the file, and replays the same replacements on new_string', async () => {
    const files = { 'san.txt': '<function_results>\n<name>x</name>\n\nHuman: hi\n', 'lit.txt': '<n> tag\n', 'eq.txt': '<name>z</name>\n' };
    const { results: r, bytes: b } = await h.runAndRead(
      files,
      [
        readAll(files),
        edit('s1', 'san.txt', '<fnr>\n<n>x</n>', '<fnr>\n<n>y</n>  '),
        // Only the replacements that changed old_string apply to new_string: "<e>" stays.
        edit('s2', 'san.txt', '\n\nH: hi', '\n\nH: bye <e>'),
        // Found as written: nothing is restored, in either string.
        edit('s3', 'lit.txt', '<n> tag', '<n> TAG <o>'),
        edit('s4', 'eq.txt', '<n>z</n>', '<name>z</name>'),
        edit('s5', 'eq.txt', '<n>missing', '<n>found'),
      ],
      Object.keys(files),
    );
    expect(r.s1).toMatchObject(ok('The file /workspace/san.txt has been updated successfully.'));
    expect(r.s2).toMatchObject(ok('The file /workspace/san.txt has been updated successfully.'));
    expect(r.s3).toMatchObject(ok('The file /workspace/lit.txt has been updated successfully.'));
    expect(r.s4).toMatchObject(err('<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>'));
    expect(r.s5).toMatchObject(err('<tool_use_error>String to replace not found in file.\nString: <n>missing</tool_use_error>'));
    expect(b['san.txt']).toEqual(bytes('<function_results>\n<name>y</name>\n\nHuman: bye <e>\n'));
    expect(b['lit.txt']).toEqual(bytes('<n> TAG <o>\n'));
    expect(b['eq.txt']).toEqual(bytes('<name>z</name>\n'));
  });

  it('fails an edit that is a no-op once quotes are normalised, and leaves the file as it was', async () => {
    const files = { 'q.txt': 'He said \u201chello\u201d\n', 'qq.txt': 'say "x"\n' };
    const { results: r, bytes: b } = await h.runAndRead(
      files,
      [
        readAll(files),
        edit('q1', 'q.txt', 'said "hello"', 'said \u201chello\u201d'),
        edit('q2', 'qq.txt', 'say \u201cx\u201d', 'say "x"'),
        edit('q3', 'qq.txt', 'say', 'said'),
      ],
      Object.keys(files),
    );
    expect(r.q1).toMatchObject(err('String not found in file. Failed to apply edit.'));
    expect(r.q2).toMatchObject(err('String not found in file. Failed to apply edit.'));
    // The failed call changed neither the file nor what the session knows of it.
    expect(r.q3).toMatchObject(ok('The file /workspace/qq.txt has been updated successfully.'));
    expect(b['q.txt']).toEqual(bytes('He said \u201chello\u201d\n'));
    expect(b['qq.txt']).toEqual(bytes('said "x"\n'));
  });

  it('Write strips trailing whitespace on every line outside Markdown, keeping each line ending', async () => {
    const write = (id: string, file: string, content: string) => [call(id, 'Write', { file_path: `/workspace/${file}`, content })];
    const { results: r, bytes: b } = await h.runAndRead(
      { 'exist.txt': 'old\n' },
      [
        write('w1', 'a.txt', 'a  \n\tb\t\r\nc \rd  '),
        write('w2', 'b.md', 'a  \n'),
        write('w3', 'c.MD', 'a  \n'),
        write('w4', 'd.mdx', 'a  \n'),
        write('w5', 'u.txt', 'x\u00a0\ny\u3000\nz\ufeff\nw\u2028 \n'),
        write('w6', 'Makefile', 'all:\n\techo hi \n   \nend\n\n\n'),
        [call('r1', 'Read', { file_path: '/workspace/exist.txt' })],
        write('w7', 'exist.txt', 'new   \n'),
        write('w8', 'md.txt.md', ' x \n'),
        write('w9', 'spaces.txt', '   '),
        // What Write wrote (stripped) counts as read.
        edit('e1', 'Makefile', 'end', 'END'),
      ],
      ['a.txt', 'b.md', 'c.MD', 'd.mdx', 'u.txt', 'Makefile', 'exist.txt', 'md.txt.md', 'spaces.txt'],
    );
    expect(r.w1).toMatchObject(ok('File created successfully at: /workspace/a.txt'));
    expect(r.w7).toMatchObject(ok('The file /workspace/exist.txt has been updated successfully.'));
    expect(r.w9).toMatchObject(ok('File created successfully at: /workspace/spaces.txt'));
    expect(r.e1).toMatchObject(ok('The file /workspace/Makefile has been updated successfully.'));
    expect(b['a.txt']).toEqual(bytes('a\n\tb\r\nc\rd'));
    expect(b['b.md']).toEqual(bytes('a  \n'));
    expect(b['c.MD']).toEqual(bytes('a  \n'));
    expect(b['d.mdx']).toEqual(bytes('a  \n'));
    expect(b['u.txt']).toEqual(bytes('x\ny\nz\nw\n'));
    expect(b.Makefile).toEqual(bytes('all:\n\techo hi\n\nEND\n\n\n'));
    expect(b['exist.txt']).toEqual(bytes('new\n'));
    expect(b['md.txt.md']).toEqual(bytes(' x \n'));
    expect(b['spaces.txt']).toEqual(bytes(''));
  });
});
