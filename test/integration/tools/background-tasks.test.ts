import { describe, expect, it } from 'vitest';
import { call, useToolStack } from './tool-harness.ts';

const NOTICE = /^(?:([\s\S]*)\n)?Command running in background with ID: (b[a-z0-9]{8})\. Output is being written to: \/tmp\/tasks\/\2\.output$/;

describe('background Bash tasks', () => {
  const h = useToolStack();

  it('starts, auto-backgrounds on timeout, reports output, stops, and forgets finished tasks', async () => {
    const sessionId = await h.session({});
    const first = await h.turn(sessionId, [
      [
        call('k1', 'Bash', { command: 'echo hello; sleep 1; echo bye', run_in_background: true }),
        call('k2', 'Bash', { command: 'sleep 30', run_in_background: true }),
        call('k3', 'Bash', { command: 'echo early; sleep 3; echo late', timeout: 1500 }),
      ],
    ]);
    const [k1, k2, k3] = first.map((l) => NOTICE.exec(String(l.content)));
    expect(first.map((l) => l.is_error)).toEqual([false, false, false]);
    expect(k1?.[1]).toBeUndefined();
    expect(k3?.[1]).toBe('early');
    const [id1, id2, id3] = [k1![2]!, k2![2]!, k3![2]!];

    const second = await h.turn(sessionId, [
      [call('o1', 'TaskOutput', { task_id: id2, block: false })],
      [call('o2', 'TaskOutput', { task_id: id1 })],
      [call('o3', 'TaskOutput', { task_id: id1 })],
      [call('s1', 'TaskStop', { task_id: id2 })],
      [call('s2', 'TaskOutput', { task_id: id2, block: false })],
      [call('s3', 'TaskStop', { task_id: 'nope' })],
      [call('o4', 'TaskOutput', { task_id: id3, timeout: 10_000 })],
      [call('b1', 'Bash', { command: `cat /tmp/tasks/${id1}.output` })],
    ]);
    const byId = Object.fromEntries(second.map((l) => [l.id, l]));
    expect(byId.o1).toEqual({
      id: 'o1',
      is_error: false,
      content: `<retrieval_status>not_ready</retrieval_status>\n\n<task_id>${id2}</task_id>\n\n<task_type>local_bash</task_type>\n\n<status>running</status>`,
    });
    expect(byId.o2!.content).toBe(
      `<retrieval_status>success</retrieval_status>\n\n<task_id>${id1}</task_id>\n\n<task_type>local_bash</task_type>\n\n<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<output>\nhello\nbye\n</output>`,
    );
    expect(byId.o3).toMatchObject({ is_error: true, content: `<tool_use_error>No task found with ID: ${id1}</tool_use_error>` });
    expect(byId.s1).toMatchObject({
      is_error: false,
      content: JSON.stringify({ message: `Successfully stopped task: ${id2} (sleep 30)`, task_id: id2, task_type: 'local_bash', command: 'sleep 30' }),
    });
    expect(byId.s2).toMatchObject({ is_error: true, content: `<tool_use_error>No task found with ID: ${id2}</tool_use_error>` });
    expect(byId.s3).toMatchObject({ is_error: true, content: '<tool_use_error>No task found with ID: nope</tool_use_error>' });
    expect(byId.o4!.content).toBe(
      `<retrieval_status>success</retrieval_status>\n\n<task_id>${id3}</task_id>\n\n<task_type>local_bash</task_type>\n\n<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<output>\nearly\nlate\n</output>`,
    );
    expect(byId.b1).toMatchObject({ is_error: false, content: 'hello\nbye' });
  });
});
