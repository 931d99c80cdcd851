import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

describe('a turn through the whole local stack', () => {
  const fx = useLocalStack({ brain: () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } }) });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    ({ api } = fx);
  });

  it('runs Bash and Read in the workspace, then answers, streaming every step', async () => {
    const sessionId = await api.createSession({ 'src/hello.txt': 'hello\nworld\n' });
    stack.model!.enqueue(
      {
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'cd src && ls && echo err >&2 && echo new > made.txt' } },
        ],
      },
      { content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: '/workspace/src/made.txt' } }] },
      { content: [{ type: 'text', text: 'All done.' }] },
    );
    const { status, events } = await api.turnSse(sessionId, 'inspect the workspace');
    expect(status).toBe(200);
    expect(events.map((e) => e.type)).toEqual([
      'turn_start',
      'text_delta',
      'assistant_message',
      'tool_use',
      'tool_result',
      'assistant_message',
      'tool_use',
      'tool_result',
      'text_delta',
      'assistant_message',
      'turn_end',
    ]);
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results[0]).toMatchObject({ toolUseId: 'toolu_bash', isError: false, content: 'hello.txt\nerr' });
    expect(results[1]).toMatchObject({ toolUseId: 'toolu_read', isError: false, content: '1\tnew\n2\t' });
    expect(events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });

    // The model saw the results it was sent, and the cwd carried over to the session.
    const sent = stack.model!.requests.at(-1)!.body.messages;
    // (The newest block carries the prompt-cache breakpoint.)
    expect(sent.at(-1)!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_read', content: '1\tnew\n2\t', cache_control: { type: 'ephemeral' } }]);
    const session = await api.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.json).toMatchObject({ status: 'idle', messageCount: 6, turnCount: 1, cwd: '/workspace/src', workspace: { version: 2 } });
  });

  it('sends the model non-ASCII text exactly (the request body goes out as UTF-8 bytes)', async () => {
    const sessionId = await api.createSession();
    const prompt = 'Grüße, naïve café 日本語 — 🚀 done';
    stack.model!.enqueue({ content: [{ type: 'text', text: 'ok' }] });
    expect((await api.turn(sessionId, prompt)).json).toMatchObject({ stopReason: 'end_turn' });
    expect(JSON.stringify(stack.model!.requests.at(-1)!.body.messages[0]!.content)).toContain(prompt);
  });

  it('returns JSON when the client does not ask for a stream, and keeps the log in order', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Hi there.' }] });
    const res = await api.turn(sessionId, 'say hi');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => [m.seq, m.kind, m.role])).toEqual([
      [0, 'prompt', 'user'],
      [1, 'assistant', 'assistant'],
    ]);
    expect(messages[1].content).toEqual([{ type: 'text', text: 'Hi there.' }]);
  });

  it('gives every tool_use a result, even for unknown tools and bad input', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_nope', name: 'Nope', input: {} },
          { type: 'tool_use', id: 'toolu_bad', name: 'Read', input: { path: '/workspace/x' } },
          { type: 'tool_use', id: 'toolu_missing', name: 'Read', input: { file_path: '/workspace/missing.txt' } },
        ],
      },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    const res = await api.turn(sessionId, 'try things');
    const results = res.json.events.filter((e: any) => e.type === 'tool_result');
    expect(results.map((r: any) => [r.toolUseId, r.isError])).toEqual([
      ['toolu_nope', true],
      ['toolu_bad', true],
      ['toolu_missing', true],
    ]);
    expect(results[0].content).toBe('<tool_use_error>Error: No such tool available: Nope</tool_use_error>');
    expect(results[1].content).toBe(
      '<tool_use_error>InputValidationError: Read failed due to the following issues:\n' +
        'The required parameter `file_path` is missing\nAn unexpected parameter `path` was provided</tool_use_error>',
    );
    expect(results[2].content).toContain('File does not exist.');
  });
});
