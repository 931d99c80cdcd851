import { describe, expect, it } from 'vitest';
import { partitionToolCalls, runTools } from '../../../../functions/tools/execution/run-tools.ts';
import type { ExecutorUpdate } from '../../../../functions/tools/execution/streaming-executor.ts';
import { assembleToolPool } from '../../../../functions/tools/registry.ts';
import { buildTool } from '../../../../functions/tools/tool.ts';
import type { ToolUseEnv } from '../../../../functions/tools/run-tool-use.ts';
import { gatedTool, open, settle, testContext, type Deferred } from '../../../support/fake-tools.ts';

describe('partitionToolCalls', () => {
  it('groups consecutive safe calls and gives each other call its own batch', () => {
    const events: string[] = [];
    const gates = new Map<string, Deferred>();
    const pool = assembleToolPool({
      builtins: [
        gatedTool('Safe', { safe: true, events, gates }),
        gatedTool('Unsafe', { safe: false, events, gates }),
        gatedTool('Maybe', { safe: (i) => i.key.startsWith('ro'), events, gates }),
        buildTool({ ...gatedTool('Throws', { events, gates }), isConcurrencySafe: () => { throw new Error('cannot tell'); } }),
      ],
    });
    const blocks = [
      { id: '1', name: 'Safe', input: { key: 'a' } },
      { id: '2', name: 'Maybe', input: { key: 'ro-b' } },
      { id: '3', name: 'Unsafe', input: { key: 'c' } },
      { id: '4', name: 'Unsafe', input: { key: 'd' } },
      { id: '5', name: 'Maybe', input: { key: 'rw-e' } },
      { id: '6', name: 'Safe', input: { key: 'f' } },
      { id: '7', name: 'Safe', input: { nope: 1 } },
      { id: '8', name: 'Gone', input: {} },
      { id: '9', name: 'Throws', input: { key: 'g' } },
    ];
    expect(partitionToolCalls(blocks, pool).map((b) => [b.isConcurrencySafe, b.blocks.map((x) => x.id).join('')])).toEqual([
      [true, '12'],
      [false, '3'],
      [false, '4'],
      [false, '5'],
      [true, '6'],
      [false, '7'],
      [false, '8'],
      [false, '9'],
    ]);
  });
});

describe('runTools', () => {
  it('runs batches in order, safe ones together, and returns the context after every modifier', async () => {
    const events: string[] = [];
    const gates = new Map<string, Deferred>();
    const tag = (key: string) => (ctx: any) => ({ ...ctx, turnId: `${ctx.turnId}+${key}` });
    const env: ToolUseEnv = {
      pool: assembleToolPool({
        builtins: [gatedTool('Safe', { safe: true, events, gates, modify: (i) => tag(i.key) }), gatedTool('Unsafe', { safe: false, events, gates, modify: (i) => tag(i.key) })],
      }),
      permissions: { mode: 'bypassPermissions', rules: [], unattended: false },
      hooks: [],
    };
    const gen = runTools(
      [
        { id: '1', name: 'Safe', input: { key: 'a' } },
        { id: '2', name: 'Safe', input: { key: 'b' } },
        { id: '3', name: 'Unsafe', input: { key: 'c' } },
      ],
      env,
      testContext(),
    );
    const updates: ExecutorUpdate[] = [];
    const done = (async () => {
      for (;;) {
        const next = await gen.next();
        if (next.done) return next.value;
        updates.push(next.value);
      }
    })();
    await settle();
    expect(events).toEqual(['start a', 'start b']);
    open(gates, 'b');
    open(gates, 'a');
    await settle();
    expect(events).toEqual(['start a', 'start b', 'end b', 'end a', 'start c']);
    open(gates, 'c');
    const finalContext = await done;
    expect(updates.map((u) => (u.type === 'outcome' ? u.block.id : u.type))).toEqual(['1', '2', '3']);
    expect(finalContext.turnId).toBe('turn_test+a+b+c');
  });
});
