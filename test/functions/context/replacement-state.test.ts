import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it, vi } from 'vitest';
import {
  applyDecisions,
  cloneContentReplacementState,
  createContentReplacementState,
  enforceToolResultBudget,
  type BudgetOptions,
} from '../../../functions/context/replacement-state.ts';

const use = (id: string, name = 'Bash'): MessageParam => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input: {} }] });
const results = (...r: [string, number][]): MessageParam => ({
  role: 'user',
  content: r.map(([id, n]) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'x'.repeat(n) })),
});
const options = (limit: number, skip: string[] = []): BudgetOptions => ({
  limit,
  skipToolNames: new Set(skip),
  persist: vi.fn(async (id: string) => `<persisted-output>${id}</persisted-output>`),
});
const contentOf = (messages: MessageParam[], id: string) => {
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_result' && b.tool_use_id === id) return b.content;
  }
  return undefined;
};

describe('enforceToolResultBudget', () => {
  it('replaces the largest fresh results of a message until it fits, and freezes the rest', async () => {
    const state = createContentReplacementState();
    const messages = [{ role: 'user', content: 'go' } as MessageParam, use('a'), results(['a', 30], ['b', 50], ['c', 40])];
    const out = await enforceToolResultBudget(messages, state, options(80));
    expect(out.decisions).toEqual({ seen: ['a', 'c'], replaced: [{ toolUseId: 'b', replacement: '<persisted-output>b</persisted-output>' }] });
    expect(contentOf(out.messages, 'b')).toBe('<persisted-output>b</persisted-output>');
    expect(contentOf(out.messages, 'a')).toBe('x'.repeat(30));
    expect(messages[2]).toEqual(results(['a', 30], ['b', 50], ['c', 40])); // the input is not changed
  });

  it('judges each API-level message on its own', async () => {
    const out = await enforceToolResultBudget([use('a'), results(['a', 70]), use('b'), results(['b', 70])], createContentReplacementState(), options(80));
    expect(out.decisions.replaced).toEqual([]);
  });

  it('never replaces a frozen result later, and re-applies a replacement without persisting again', async () => {
    const state = createContentReplacementState();
    const opts = options(80);
    const first = [use('a'), results(['a', 60], ['b', 50])];
    await enforceToolResultBudget(first, state, opts);
    expect([...state.replacements.keys()]).toEqual(['a']);
    // A lower limit now would pick b if it were fresh; it is frozen, so the overage is accepted.
    const again = await enforceToolResultBudget(first, state, { ...opts, limit: 10 });
    expect(again.decisions).toEqual({ seen: [], replaced: [] });
    expect(contentOf(again.messages, 'a')).toBe('<persisted-output>a</persisted-output>');
    expect(contentOf(again.messages, 'b')).toBe('x'.repeat(50));
    expect(opts.persist).toHaveBeenCalledTimes(1);
  });

  it('skips tools that opt out of persistence (Read), but counts nothing for them', async () => {
    const out = await enforceToolResultBudget(
      [use('r', 'Read'), use('b'), results(['r', 500], ['b', 10])],
      createContentReplacementState(),
      options(100, ['Read']),
    );
    expect(out.decisions).toEqual({ seen: ['r', 'b'], replaced: [] });
  });

  it('leaves already-persisted results alone, and records a failed persist as kept', async () => {
    const state = createContentReplacementState();
    const messages: MessageParam[] = [
      use('p'),
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'p', content: `<persisted-output>\n${'y'.repeat(500)}` },
          { type: 'tool_result', tool_use_id: 'q', content: 'z'.repeat(200) },
        ],
      },
    ];
    const out = await enforceToolResultBudget(messages, state, { limit: 100, skipToolNames: new Set(), persist: async () => null });
    expect(out.decisions).toEqual({ seen: ['q'], replaced: [] });
  });

  it('makes identical decisions after a reload from the recorded decisions, and in a clone', async () => {
    const state = createContentReplacementState();
    const messages = [use('a'), results(['a', 30], ['b', 50], ['c', 40])];
    const first = await enforceToolResultBudget(messages, state, options(80));
    const reloaded = applyDecisions(createContentReplacementState(), first.decisions);
    const fork = cloneContentReplacementState(state);
    const later = [...messages, use('d'), results(['d', 90])];
    const [x, y, z] = await Promise.all([
      enforceToolResultBudget(later, state, options(80)),
      enforceToolResultBudget(later, reloaded, options(80)),
      enforceToolResultBudget(later, fork, options(80)),
    ]);
    expect(JSON.stringify(y.messages)).toBe(JSON.stringify(x.messages));
    expect(JSON.stringify(z.messages)).toBe(JSON.stringify(x.messages));
    expect(x.decisions.replaced.map((r) => r.toolUseId)).toEqual(['d']);
    expect(fork.replacements).not.toBe(state.replacements);
  });
});
