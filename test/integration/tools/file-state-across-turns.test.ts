import { describe, expect, it } from 'vitest';
import { call, useToolStack } from './tool-harness.ts';

describe('the read-file state across stateless turns', () => {
  const h = useToolStack();

  it('lets turn 3 edit what turn 1 read, and refuses once someone else changed the file', async () => {
    const sessionId = await h.session({ 'notes.md': 'draft one\n', 'other.md': 'x\n' });
    await h.turn(sessionId, [[call('t1', 'Read', { file_path: '/workspace/notes.md' }), call('t1b', 'Read', { file_path: '/workspace/other.md' })]]);
    await h.turn(sessionId, [[call('t2', 'Bash', { command: 'echo y >> other.md' })]]);
    const third = await h.turn(sessionId, [
      [call('t3', 'Edit', { file_path: '/workspace/notes.md', old_string: 'one', new_string: 'two' })],
      [call('t4', 'Edit', { file_path: '/workspace/other.md', old_string: 'x', new_string: 'z' })],
      [call('t5', 'Read', { file_path: '/workspace/notes.md' })],
    ]);
    expect(third).toEqual([
      { id: 't3', is_error: false, content: 'The file /workspace/notes.md has been updated successfully.' },
      {
        id: 't4',
        is_error: true,
        content:
          '<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.</tool_use_error>',
      },
      { id: 't5', is_error: false, content: '1\tdraft two\n2\t' },
    ]);
  });

  it('answers an unchanged re-read in a later turn with the unchanged note', async () => {
    const sessionId = await h.session({ 'a.txt': 'a\n' });
    await h.turn(sessionId, [[call('u1', 'Read', { file_path: '/workspace/a.txt' })]]);
    expect(await h.turn(sessionId, [[call('u2', 'Read', { file_path: '/workspace/a.txt' })]])).toEqual([
      {
        id: 'u2',
        is_error: false,
        content:
          'File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading.',
      },
    ]);
  });
});
