import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT_LIMITS, getPersistenceThreshold } from '../../../functions/context/limits.ts';
import { formatFileSize } from '../../../sandbox-runner/common/file-size.ts';
import { TOOL_RESULT_CLEARED_MESSAGE, microCompact } from '../../../functions/context/micro-compact.ts';
import { buildLargeToolResultMessage, createPersistedResultReader, generatePreview } from '../../../functions/context/persisted-output.ts';
import { createContentReplacementState } from '../../../functions/context/replacement-state.ts';
import { splitForCompaction } from '../../../functions/context/compact.ts';
import { estimateMessagesTokens, tokenCountWithEstimation } from '../../../functions/context/tokens.ts';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { createToolRegistry } from '../../../functions/tools/registry.ts';

describe('getPersistenceThreshold', () => {
  const limits = { ...DEFAULT_CONTEXT_LIMITS, persistThresholdOverrides: { Bash: 80_000, Read: 10, Grep: -1 } };
  it('exempts Infinity for good, even against an override', () => {
    expect(getPersistenceThreshold('Read', Infinity, limits)).toBe(Infinity);
  });
  it('lets a positive override win over both the tool and the cap', () => {
    expect(getPersistenceThreshold('Bash', 30_000, limits)).toBe(80_000);
  });
  it('otherwise takes the smaller of the tool value and the 50,000 cap', () => {
    expect(getPersistenceThreshold('Grep', 20_000, limits)).toBe(20_000);
    expect(getPersistenceThreshold('Glob', 100_000, limits)).toBe(50_000);
  });
});

describe('the persisted-output message', () => {
  it('formats sizes as the reference does', () => {
    expect([formatFileSize(999), formatFileSize(2000), formatFileSize(28_000), formatFileSize(3 * 1024 * 1024)]).toEqual(['999 bytes', '2KB', '27.3KB', '3MB']);
  });
  it('cuts the preview at a newline past half, else at the limit', () => {
    expect(generatePreview(`${'a'.repeat(1500)}\n${'b'.repeat(1000)}`, 2000)).toEqual({ preview: 'a'.repeat(1500), hasMore: true });
    expect(generatePreview(`${'a'.repeat(500)}\n${'b'.repeat(3000)}`, 2000)).toEqual({ preview: `${'a'.repeat(500)}\n${'b'.repeat(1499)}`, hasMore: true });
    expect(generatePreview('short', 2000)).toEqual({ preview: 'short', hasMore: false });
  });
  it('says where the full output is and shows the preview', () => {
    expect(buildLargeToolResultMessage({ path: '/workspace/.stratus/tool-results/toolu_1.txt', originalSize: 60_000, preview: 'head', hasMore: true })).toBe(
      '<persisted-output>\nOutput too large (58.6KB). Full output saved to: /workspace/.stratus/tool-results/toolu_1.txt\n\nPreview (first 2KB):\nhead\n...\n</persisted-output>',
    );
  });
  it('only owns the reserved folder and refuses names that are not result files', async () => {
    const reader = createPersistedResultReader({ get: async (key: string) => `object ${key}` } as never, 'ses_1');
    expect(reader.owns('/workspace/src/a.txt')).toBe(false);
    expect(await reader.read('/workspace/.stratus/tool-results/toolu_1.txt')).toBe('object tool-results/ses_1/toolu_1.txt');
    expect(await reader.read('/workspace/.stratus/tool-results/../../x.txt')).toBeUndefined();
  });
});

const builtins = createToolRegistry();
const builtinCompactable = (name: string): boolean => builtins.find(name)?.compactableResult === true;

describe('micro-compaction', () => {
  it('clears all but the most recent compactable results with the reference marker, once', () => {
    const messages: MessageParam[] = ['a', 'b', 'c'].flatMap((id): MessageParam[] => [
      { role: 'assistant', content: [{ type: 'tool_use', id, name: id === 'b' ? 'Custom' : 'Bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'out' }] },
    ]);
    const state = createContentReplacementState();
    expect(microCompact(messages, state, 1, builtinCompactable).replaced).toEqual([{ toolUseId: 'a', replacement: TOOL_RESULT_CLEARED_MESSAGE }]);
    expect(TOOL_RESULT_CLEARED_MESSAGE).toBe('[Old tool result content cleared]');
    expect(microCompact(messages, state, 1, builtinCompactable).replaced).toEqual([]);
  });

  it('clears the results of the tools that declare them reproducible, not those of tools Stratus does not have', () => {
    const names = ['WebFetch', 'WebSearch', 'Read', 'Grep', 'Glob', 'Edit', 'Write', 'TaskOutput', 'Bash'];
    const messages: MessageParam[] = names.flatMap((name, i): MessageParam[] => [
      { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name, input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'out' }] },
    ]);
    const cleared = microCompact(messages, createContentReplacementState(), 1, builtinCompactable).replaced.map((d) => names[Number(d.toolUseId.slice(1))]);
    // The newest compactable result (Bash) is kept; WebFetch/WebSearch are no Stratus tools and TaskOutput's result is not reproducible.
    expect(cleared).toEqual(['Read', 'Grep', 'Glob', 'Edit', 'Write']);
  });
});

describe('compaction split and token counts', () => {
  const msgs = (...roles: ('u' | 'a' | 'r')[]): MessageParam[] =>
    roles.map((r) =>
      r === 'a'
        ? { role: 'assistant', content: 'x' }
        : r === 'r'
          ? { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }
          : { role: 'user', content: 'x' },
    );
  it('keeps a tail that never starts with orphaned tool results, and at most half', () => {
    expect(splitForCompaction(msgs('u', 'a', 'r', 'a', 'u', 'a', 'r'), 2)).toBe(5);
    expect(splitForCompaction(msgs('u', 'a', 'r', 'a', 'u', 'a', 'r'), 3)).toBe(4);
    expect(splitForCompaction(msgs('u', 'a', 'r', 'a', 'r', 'a', 'r', 'a'), 5)).toBe(5);
    expect(splitForCompaction(msgs('u', 'a'), 6)).toBe(1);
    expect(splitForCompaction([], 6)).toBe(0);
  });
  it('adds an estimate of what came after the last measured response', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'y'.repeat(40) },
    ];
    expect(estimateMessagesTokens(messages)).toBe(Math.ceil(442 / 4));
    expect(tokenCountWithEstimation(messages, { tokens: 1000, messageCount: 2 })).toBe(1010);
    expect(tokenCountWithEstimation(messages, undefined)).toBe(111);
  });
});
