import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

describe('Write through the runner', () => {
  const h = useToolStack();

  it('creates files (and their directories), refuses unread or changed files, and updates read ones', async () => {
    const r = await h.run({ 'a.txt': 'one\n', 'b.txt': 'bee\n', 'c.txt': 'c\n', 'dir/x': 'x' }, [
      [call('w1', 'Write', { file_path: '/workspace/new/dir/n.txt', content: 'hi\r\nthere' })],
      [call('w2', 'Write', { file_path: '/workspace/a.txt', content: 'two' })],
      [call('r1', 'Read', { file_path: '/workspace/a.txt', limit: 1 })],
      [call('w3', 'Write', { file_path: '/workspace/a.txt', content: 'two' })],
      [call('r2', 'Read', { file_path: '/workspace/b.txt' })],
      [call('x1', 'Bash', { command: 'echo changed > b.txt' })],
      [call('w4', 'Write', { file_path: '/workspace/b.txt', content: 'three' })],
      [call('w5', 'Write', { file_path: 'rel.txt', content: 'x' })],
      [call('w6', 'Write', { file_path: '/workspace/dir', content: 'x' })],
      [call('r3', 'Read', { file_path: '/workspace/c.txt' })],
      [call('w7', 'Write', { file_path: '/workspace/c.txt', content: 'new c\r\nline2\r\n' })],
      [call('w8', 'Write', { file_path: '/workspace/c.txt', content: 'again' })],
      [call('x2', 'Bash', { command: 'od -c new/dir/n.txt | head -1; cat a.txt rel.txt c.txt' })],
    ]);
    expect(r.w1).toMatchObject(ok('File created successfully at: /workspace/new/dir/n.txt'));
    expect(r.w2).toMatchObject(err('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>'));
    expect(r.w3).toMatchObject(ok('The file /workspace/a.txt has been updated successfully.'));
    expect(r.w4).toMatchObject(
      err(
        '<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.</tool_use_error>',
      ),
    );
    expect(r.w5).toMatchObject(ok('File created successfully at: rel.txt'));
    expect(r.w6).toMatchObject(err('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>'));
    expect(r.w7).toMatchObject(ok('The file /workspace/c.txt has been updated successfully.'));
    // What Write wrote counts as read: a second write needs no new Read.
    expect(r.w8).toMatchObject(ok('The file /workspace/c.txt has been updated successfully.'));
    // Content is written exactly as given (no line-ending conversion).
    expect(r.x2).toMatchObject(ok('0000000   h   i  \\r  \\n   t   h   e   r   e\ntwoxagain'));
  });

  it('keeps writes inside the workspace', async () => {
    const r = await h.run({}, [[call('o1', 'Write', { file_path: '/etc/evil', content: 'x' })]]);
    expect(r.o1).toMatchObject(err("<tool_use_error>Cannot write '/etc/evil': only paths under /workspace can be written.</tool_use_error>"));
  });
});
