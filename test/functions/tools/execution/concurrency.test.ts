import { describe, expect, it } from 'vitest';
import { isCallConcurrencySafe } from '../../../../functions/tools/execution/concurrency.ts';
import { assembleToolPool } from '../../../../functions/tools/registry.ts';
import { buildTool } from '../../../../functions/tools/tool.ts';
import { gatedTool, type Deferred } from '../../../support/fake-tools.ts';

describe('isCallConcurrencySafe', () => {
  it('asks the tool about its parsed input, and answers "not safe" for an unknown tool, input that does not parse and a tool that throws', () => {
    const events: string[] = [];
    const gates = new Map<string, Deferred>();
    const pool = assembleToolPool({
      builtins: [
        gatedTool('Safe', { safe: true, events, gates }),
        gatedTool('Unsafe', { safe: false, events, gates }),
        gatedTool('Maybe', { safe: (i) => i.key.startsWith('ro'), events, gates }),
        buildTool({
          ...gatedTool('Throws', { events, gates }),
          isConcurrencySafe: () => {
            throw new Error('cannot tell');
          },
        }),
      ],
    });
    const calls = [
      { name: 'Safe', input: { key: 'a' } },
      { name: 'Maybe', input: { key: 'ro-b' } },
      { name: 'Unsafe', input: { key: 'c' } },
      { name: 'Maybe', input: { key: 'rw-e' } },
      { name: 'Safe', input: { nope: 1 } },
      { name: 'Gone', input: {} },
      { name: 'Throws', input: { key: 'g' } },
    ];
    expect(calls.map((call) => isCallConcurrencySafe(pool, call))).toEqual([true, true, false, false, false, false, false]);
  });
});
