import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

describe('a turn with the model through Bedrock', () => {
  // The Bedrock SDK client against the scripted model's Bedrock Runtime side: event-stream
  // framing, SigV4, the model id in the path.
  const fx = useLocalStack({ brain: unscripted, scriptedProvider: 'bedrock', model: { name: 'us.anthropic.claude-stand-in-v1:0' } });

  it('runs a tool and answers, streaming every step, with the usage Bedrock reported', async () => {
    const { stack, api } = fx;
    expect(stack.deps.config.model.provider).toBe('bedrock');
    const sessionId = await api.createSession({ 'a.txt': 'one\ntwo\n' });
    stack.model!.enqueue(
      { content: [{ type: 'text', text: 'Counting.' }, bash('toolu_wc', 'wc -l < a.txt')], usage: { input_tokens: 1_200, output_tokens: 30 } },
      { ...text('Two lines.'), usage: { input_tokens: 1_300, output_tokens: 5 } },
    );
    const { status, events } = await api.turnSse(sessionId, 'count the lines');
    expect(status).toBe(200);
    expect(events.map((e) => e.type)).toEqual([
      'turn_start',
      'text_delta',
      'assistant_message',
      'tool_use',
      'tool_result',
      'text_delta',
      'assistant_message',
      'turn_end',
    ]);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolUseId: 'toolu_wc', isError: false, content: '2' });
    expect(events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn', usage: { inputTokens: 2_500, outputTokens: 35 } });
    const sent = stack.model!.requests.slice(-2);
    expect(sent.map((r) => r.body.model)).toEqual(['us.anthropic.claude-stand-in-v1:0', 'us.anthropic.claude-stand-in-v1:0']);
    expect(sent.every((r) => r.authorization?.startsWith('AWS4-HMAC-SHA256 '))).toBe(true);
  });
});
