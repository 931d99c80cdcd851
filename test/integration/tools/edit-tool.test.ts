import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

describe('Edit through the runner', () => {
  const h = useToolStack();
  const files = {
    'e.txt': 'alpha beta\nbeta gamma\n',
    'q.txt': 'He said \u201chello\u201d and \u2018bye\u2019\n',
    'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
    'u16.txt': { base64: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\r\nb\r\n', 'utf16le')]).toString('base64') },
    'nb.ipynb': '{}',
    'empty.txt': '',
    'part.txt': '1\n2\n3\n',
  };

  it('refuses with the reference messages, in its order', async () => {
    const r = await h.run(files, [
      [call('e1', 'Edit', { file_path: '/workspace/e.txt', old_string: 'x', new_string: 'x' })],
      [call('e2', 'Edit', { file_path: '/workspace/e.txt', old_string: 'alpha', new_string: 'ALPHA' })],
      [call('r1', 'Read', { file_path: '/workspace/e.txt' }), call('r2', 'Read', { file_path: '/workspace/nb.ipynb' })],
      [call('e3', 'Edit', { file_path: '/workspace/e.txt', old_string: 'delta', new_string: 'DELTA' })],
      [call('e4', 'Edit', { file_path: '/workspace/e.txt', old_string: 'beta', new_string: 'BETA' })],
      [call('e5', 'Edit', { file_path: '/workspace/e.txt', old_string: '', new_string: 'zzz' })],
      [call('e6', 'Edit', { file_path: '/workspace/nope.txt', old_string: 'a', new_string: 'b' })],
      [call('e7', 'Edit', { file_path: '/workspace/e.tx', old_string: 'a', new_string: 'b' })],
      [call('e8', 'Edit', { file_path: '/workspace/nb.ipynb', old_string: '{', new_string: '[' })],
      [call('e9', 'Edit', { file_path: '/workspace/empty.txt', old_string: '', new_string: 'filled\n' })],
      [call('x1', 'Bash', { command: 'echo more >> e.txt' })],
      [call('e10', 'Edit', { file_path: '/workspace/e.txt', old_string: 'gamma', new_string: 'G' })],
    ]);
    expect(r.e1).toMatchObject(err('<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>'));
    expect(r.e2).toMatchObject(err('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>'));
    expect(r.e3).toMatchObject(err('<tool_use_error>String to replace not found in file.\nString: delta</tool_use_error>'));
    expect(r.e4).toMatchObject(
      err(
        '<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: beta</tool_use_error>',
      ),
    );
    expect(r.e5).toMatchObject(err('<tool_use_error>Cannot create new file - file already exists.</tool_use_error>'));
    expect(r.e6).toMatchObject(err('<tool_use_error>File does not exist. Note: your current working directory is /workspace.</tool_use_error>'));
    expect(r.e7).toMatchObject(
      err('<tool_use_error>File does not exist. Note: your current working directory is /workspace. Did you mean e.txt?</tool_use_error>'),
    );
    expect(r.e8).toMatchObject(err('<tool_use_error>File is a Jupyter Notebook. Use the NotebookEdit to edit this file.</tool_use_error>'));
    // An empty file that was never read: validation lets it through, the last check before writing does not.
    expect(r.e9).toMatchObject(err('File has been unexpectedly modified. Read it again before attempting to write it.'));
    expect(r.e10).toMatchObject(
      err(
        '<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.</tool_use_error>',
      ),
    );
  });

  it('replaces, keeping quote style, line endings and UTF-16LE, and creates files', async () => {
    const r = await h.run(files, [
      [
        call('r1', 'Read', { file_path: '/workspace/e.txt' }),
        call('r2', 'Read', { file_path: '/workspace/q.txt' }),
        call('r3', 'Read', { file_path: '/workspace/crlf.txt' }),
        call('r4', 'Read', { file_path: '/workspace/part.txt', offset: 2 }),
        call('r5', 'Read', { file_path: '/workspace/u16.txt' }),
      ],
      [call('e1', 'Edit', { file_path: '/workspace/e.txt', old_string: 'beta', new_string: 'BETA', replace_all: true })],
      [call('e2', 'Edit', { file_path: '/workspace/q.txt', old_string: 'said "hello" and \'bye\'', new_string: 'said "hi" and \'ciao\'' })],
      [call('e3', 'Edit', { file_path: '/workspace/crlf.txt', old_string: 'two\nthree', new_string: '2\n3' })],
      [call('e4', 'Edit', { file_path: '/workspace/part.txt', old_string: '2', new_string: 'two' })],
      [call('e5', 'Edit', { file_path: '/workspace/u16.txt', old_string: 'b', new_string: 'B' })],
      [call('e6', 'Edit', { file_path: '/workspace/created/n.txt', old_string: '', new_string: 'fresh\n' })],
      [call('e7', 'Edit', { file_path: '/workspace/e.txt', old_string: 'alpha BETA', new_string: 'A' })],
      [call('x1', 'Bash', { command: 'cat e.txt q.txt part.txt created/n.txt; od -c crlf.txt | head -1; od -An -tx1 u16.txt' })],
    ]);
    expect(r.e1).toMatchObject(ok('The file /workspace/e.txt has been updated. All occurrences were successfully replaced.'));
    expect(r.e2).toMatchObject(ok('The file /workspace/q.txt has been updated successfully.'));
    expect(r.e3).toMatchObject(ok('The file /workspace/crlf.txt has been updated successfully.'));
    expect(r.e4).toMatchObject(ok('The file /workspace/part.txt has been updated successfully.'));
    expect(r.e5).toMatchObject(ok('The file /workspace/u16.txt has been updated successfully.'));
    expect(r.e6).toMatchObject(ok('The file /workspace/created/n.txt has been updated successfully.'));
    // The file state follows the edit: a second edit needs no new Read.
    expect(r.e7).toMatchObject(ok('The file /workspace/e.txt has been updated successfully.'));
    expect(r.x1).toMatchObject(
      ok(
        'A\nBETA gamma\nHe said \u201chi\u201d and \u2018ciao\u2019\n1\ntwo\n3\nfresh\n' +
          '0000000   o   n   e  \\r  \\n   2  \\r  \\n   3  \\r  \\n\n ff fe 61 00 0d 00 0a 00 42 00 0d 00 0a 00',
      ),
    );
  });
});
