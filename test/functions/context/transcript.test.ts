import { describe, expect, it } from 'vitest';
import { danglingToolUses, MISSING_RESULT_TEXT, syntheticResults, toApiMessages } from '../../../functions/context/transcript.ts';

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (id: string) => ({ type: 'tool_use' as const, id, name: 'Bash', input: {} });
const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' });

describe('toApiMessages', () => {
  it('merges consecutive user messages with tool results first', () => {
    const api = toApiMessages([
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [use('a'), use('b')] },
      { role: 'user', content: [result('a')] },
      { role: 'user', content: [result('b')] },
      { role: 'user', content: [text('next prompt')] },
    ]);
    expect(api).toEqual([
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [use('a'), use('b')] },
      { role: 'user', content: [result('a'), result('b'), text('next prompt')] },
    ]);
  });

  it('puts tool results before a prompt that was stored earlier in the same run', () => {
    const api = toApiMessages([
      { role: 'assistant', content: [use('a')] },
      { role: 'user', content: [text('p')] },
      { role: 'user', content: [result('a')] },
    ]);
    expect(api[1]!.content).toEqual([result('a'), text('p')]);
  });

  it('does not mutate the stored log', () => {
    const log = [
      { role: 'user' as const, content: [text('a')] },
      { role: 'user' as const, content: [text('b')] },
    ];
    toApiMessages(log);
    expect(log[0]!.content).toEqual([text('a')]);
  });
});

describe('danglingToolUses', () => {
  it('finds tool_use ids without a later result, in order', () => {
    expect(
      danglingToolUses([
        { role: 'assistant', content: [use('a'), use('b'), use('c')] },
        { role: 'user', content: [result('b')] },
      ]),
    ).toEqual(['a', 'c']);
  });

  it('is empty for a complete transcript', () => {
    expect(
      danglingToolUses([
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a')] },
      ]),
    ).toEqual([]);
  });

  it('syntheticResults builds one error result per dangling id', () => {
    expect(syntheticResults(['x'])).toEqual([{ type: 'tool_result', tool_use_id: 'x', content: MISSING_RESULT_TEXT, is_error: true }]);
  });
});
