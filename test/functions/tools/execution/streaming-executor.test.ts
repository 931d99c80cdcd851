import { describe, expect, it, vi } from 'vitest';
import type { PermissionContext } from '../../../../functions/permissions/types.ts';
import { StreamingToolExecutor, type ExecutorUpdate } from '../../../../functions/tools/execution/streaming-executor.ts';
import { assembleToolPool } from '../../../../functions/tools/registry.ts';
import { INTERRUPTED_MESSAGE, type ToolUseEnv } from '../../../../functions/tools/run-tool-use.ts';
import { buildTool, type Tool } from '../../../../functions/tools/tool.ts';
import { z } from 'zod';
import { deferred, gatedTool, open, settle, testContext, type Deferred } from '../../../support/fake-tools.ts';

const ALLOW_ALL: PermissionContext = { mode: 'bypassPermissions', rules: [], unattended: false };

function setup(
  extra: Tool[] = [],
  opts: { maxConcurrency?: number; signal?: AbortSignal; permissions?: PermissionContext; beforeUnsafeCall?: () => Promise<void> | undefined } = {},
) {
  const events: string[] = [];
  const gates = new Map<string, Deferred>();
  const tools = [
    gatedTool('Safe', { safe: true, readOnly: true, events, gates }),
    gatedTool('Unsafe', { safe: false, events, gates }),
    gatedTool('Bash', { safe: true, events, gates }),
    ...extra,
  ];
  const env: ToolUseEnv = { pool: assembleToolPool({ builtins: tools }), permissions: opts.permissions ?? ALLOW_ALL, hooks: [] };
  const executor = new StreamingToolExecutor(env, testContext(opts.signal), { maxConcurrency: opts.maxConcurrency, beforeUnsafeCall: opts.beforeUnsafeCall });
  let n = 0;
  const add = (name: string, input: Record<string, unknown>) => {
    const id = `toolu_${++n}`;
    executor.addTool({ id, name, input });
    return id;
  };
  return { executor, events, gates, add };
}

async function collect(executor: StreamingToolExecutor): Promise<ExecutorUpdate[]> {
  const out: ExecutorUpdate[] = [];
  for await (const update of executor.getRemainingResults()) out.push(update);
  return out;
}

function contents(updates: ExecutorUpdate[]) {
  return updates.map((u) =>
    u.type === 'outcome' && u.outcome.kind === 'result' ? [u.block.id, u.outcome.result.content] : [u.type, u.type === 'progress' ? u.progress : u.block.id],
  );
}

describe('StreamingToolExecutor', () => {
  it('waits without spinning while an earlier call runs and a later one has already finished', async () => {
    const { executor, gates, add } = setup();
    const slow = add('Safe', { key: 'slow' });
    const quick = add('Safe', { key: 'quick' });
    open(gates, 'quick');
    await settle();
    expect(executor.statusOf(quick)).toBe('completed');
    // The earlier call finishes only from a timer: a results loop that wakes itself in
    // microtasks would never let the timer fire, and this test would time out.
    setTimeout(() => open(gates, 'slow'), 20);
    const results = await collect(executor);
    expect(contents(results)).toEqual([
      [slow, 'done slow'],
      [quick, 'done quick'],
    ]);
  });

  it('runs concurrency-safe calls together, as soon as each arrives', async () => {
    const { executor, events, gates, add } = setup();
    const a = add('Safe', { key: 'a' });
    await settle();
    expect(executor.statusOf(a)).toBe('executing');
    const b = add('Safe', { key: 'b' });
    await settle();
    expect(events).toEqual(['start a', 'start b']);
    expect(executor.statusOf(b)).toBe('executing');
    open(gates, 'a');
    open(gates, 'b');
    const results = await collect(executor);
    expect(contents(results)).toEqual([
      [a, 'done a'],
      [b, 'done b'],
    ]);
    expect(executor.statusOf(a)).toBe('yielded');
  });

  it('runs a non-safe call alone and lets nothing queued after it overtake it', async () => {
    const { executor, events, gates, add } = setup();
    add('Safe', { key: 's1' });
    const w = add('Unsafe', { key: 'w' });
    const s2 = add('Safe', { key: 's2' });
    await settle();
    expect(events).toEqual(['start s1']);
    expect(executor.statusOf(w)).toBe('queued');
    expect(executor.statusOf(s2)).toBe('queued');
    open(gates, 's1');
    await settle();
    expect(events).toEqual(['start s1', 'end s1', 'start w']);
    expect(executor.statusOf(s2)).toBe('queued');
    open(gates, 'w');
    await settle();
    expect(events).toEqual(['start s1', 'end s1', 'start w', 'end w', 'start s2']);
    open(gates, 's2');
    await collect(executor);
  });

  it('yields results in the order the calls arrived, whatever order they finish in', async () => {
    const { executor, gates, add } = setup();
    const a = add('Safe', { key: 'a' });
    const b = add('Safe', { key: 'b' });
    const c = add('Safe', { key: 'c' });
    open(gates, 'c');
    open(gates, 'b');
    await settle();
    expect([...executor.getCompletedResults()]).toEqual([]);
    expect(executor.statusOf(b)).toBe('completed');
    open(gates, 'a');
    expect(contents(await collect(executor))).toEqual([
      [a, 'done a'],
      [b, 'done b'],
      [c, 'done c'],
    ]);
  });

  it('never runs more safe calls at once than the limit', async () => {
    const { executor, events, gates, add } = setup([], { maxConcurrency: 2 });
    add('Safe', { key: 'a' });
    add('Safe', { key: 'b' });
    add('Safe', { key: 'c' });
    await settle();
    expect(events).toEqual(['start a', 'start b']);
    open(gates, 'b');
    await settle();
    expect(events).toEqual(['start a', 'start b', 'end b', 'start c']);
    open(gates, 'a');
    open(gates, 'c');
    await collect(executor);
  });

  it('fails an unknown tool at once without holding up the queue', async () => {
    const { executor, events, gates, add } = setup();
    const u = add('Unsafe', { key: 'w' });
    const x = add('Nope', {});
    const s = add('Safe', { key: 's' });
    await settle();
    expect(executor.statusOf(x)).toBe('completed');
    open(gates, 'w');
    open(gates, 's');
    const results = await collect(executor);
    expect(contents(results)).toEqual([
      [u, 'done w'],
      [x, '<tool_use_error>Error: No such tool available: Nope</tool_use_error>'],
      [s, 'done s'],
    ]);
    expect(events).toEqual(['start w', 'end w', 'start s', 'end s']);
  });

  it('treats input that does not parse as not concurrency-safe and reports each bad field', async () => {
    const { executor, events, gates, add } = setup();
    add('Safe', { key: 'a' });
    const bad = add('Safe', { key: 7, extra: true });
    const c = add('Safe', { key: 'c' });
    await settle();
    // The invalid call is "not safe": it waits for `a`, and `c` waits for it.
    expect(events).toEqual(['start a']);
    open(gates, 'a');
    open(gates, 'c');
    const results = await collect(executor);
    expect(results[1]).toMatchObject({
      type: 'outcome',
      outcome: {
        result: {
          tool_use_id: bad,
          is_error: true,
          content:
            '<tool_use_error>InputValidationError: Safe failed due to the following issues:\n' +
            'An unexpected parameter `extra` was provided\nThe parameter `key` type is expected as `string` but provided as `number`</tool_use_error>',
        },
      },
    });
    expect(contents(results)[2]).toEqual([c, 'done c']);
  });

  it('cancels running and queued siblings when a Bash call errors, naming it', async () => {
    const { executor, events, gates, add } = setup();
    const b1 = add('Bash', { key: 'b1', command: 'mkdir out', fail: true });
    const b2 = add('Bash', { key: 'b2', command: 'ls out' });
    const w = add('Unsafe', { key: 'w' });
    await settle();
    expect(events).toEqual(['start b1', 'start b2']);
    open(gates, 'b1');
    const results = await collect(executor);
    const cancelled = '<tool_use_error>Cancelled: parallel tool call Bash(mkdir out) errored</tool_use_error>';
    expect(contents(results)).toEqual([
      [b1, 'b1 failed'],
      [b2, cancelled],
      [w, cancelled],
    ]);
    // The running sibling was told to stop (its signal aborted); the queued one never started.
    expect(events).toEqual(['start b1', 'start b2', 'end b1', 'end b2']);
  });

  it('cuts a long Bash command to 40 characters in the cancellation message', async () => {
    const { executor, gates, add } = setup();
    add('Bash', { key: 'b1', command: 'x'.repeat(45), fail: true });
    const b2 = add('Unsafe', { key: 'b2' });
    open(gates, 'b1');
    const results = await collect(executor);
    expect(contents(results)[1]).toEqual([b2, `<tool_use_error>Cancelled: parallel tool call Bash(${'x'.repeat(40)}…) errored</tool_use_error>`]);
  });

  it('lets errors of other tools cancel nothing', async () => {
    const { executor, gates, add } = setup();
    const a = add('Safe', { key: 'a', fail: true });
    const b = add('Safe', { key: 'b' });
    const w = add('Unsafe', { key: 'w' });
    open(gates, 'a');
    open(gates, 'b');
    open(gates, 'w');
    expect(contents(await collect(executor))).toEqual([
      [a, 'a failed'],
      [b, 'done b'],
      [w, 'done w'],
    ]);
  });

  it('gives queued calls an interrupted result on abort and lets the running one finish', async () => {
    const controller = new AbortController();
    const { executor, events, add } = setup([], { signal: controller.signal });
    const w = add('Unsafe', { key: 'w' });
    const s = add('Safe', { key: 's' });
    await settle();
    controller.abort();
    const results = await collect(executor);
    expect(contents(results)).toEqual([
      [w, 'w was aborted'],
      [
        s,
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
      ],
    ]);
    expect(events).toEqual(['start w', 'end w']);
  });

  it('on an interrupt, replaces the result of a running `cancel` tool and keeps a `block` tool running to its real result', async () => {
    const controller = new AbortController();
    const slowBlock = buildTool({
      name: 'SlowBlock',
      inputSchema: z.strictObject({}),
      description: 'ignores the stop and finishes',
      isConcurrencySafe: () => true,
      async call() {
        await new Promise((r) => setTimeout(r, 30));
        return { data: 'finished anyway' };
      },
      mapToolResultToToolResultBlockParam: (data: string, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: data }),
    });
    const events: string[] = [];
    const cancelling = { ...gatedTool('Cancelling', { safe: true, events, gates: new Map() }), interruptBehavior: () => 'cancel' as const };
    const { executor, add } = setup([slowBlock, cancelling], { signal: controller.signal });
    const c = add('Cancelling', { key: 'c' });
    const b = add('SlowBlock', {});
    await settle();
    expect(executor.statusOf(c)).toBe('executing');
    expect(executor.statusOf(b)).toBe('executing');
    controller.abort('interrupted');
    const results = await collect(executor);
    expect(contents(results)).toEqual([
      [c, INTERRUPTED_MESSAGE],
      [b, 'finished anyway'],
    ]);
    expect(INTERRUPTED_MESSAGE).toMatch(/^The user doesn't want to proceed with this tool use/);
  });

  it('discards calls that had not started when the model stream broke', async () => {
    const { executor, gates, add } = setup();
    const w = add('Unsafe', { key: 'w' });
    const s = add('Safe', { key: 's' });
    executor.discard();
    open(gates, 'w');
    expect(contents(await collect(executor))).toEqual([
      [w, 'done w'],
      [s, '<tool_use_error>Error: Streaming fallback - tool execution discarded</tool_use_error>'],
    ]);
  });

  it("applies a serial call's context modifier at once, and a safe batch's after the batch in call order", async () => {
    const events: string[] = [];
    const gates = new Map<string, Deferred>();
    const seen: string[] = [];
    const tag = (key: string) => (ctx: any) => ({ ...ctx, turnId: `${ctx.turnId}+${key}` });
    const tools = [
      gatedTool('Safe', { safe: true, events, gates, modify: (i) => tag(i.key), onCall: (i, ctx) => seen.push(`${i.key}:${ctx.turnId}`) }),
      gatedTool('Unsafe', { safe: false, events, gates, modify: (i) => tag(i.key), onCall: (i, ctx) => seen.push(`${i.key}:${ctx.turnId}`) }),
    ];
    const env: ToolUseEnv = { pool: assembleToolPool({ builtins: tools }), permissions: ALLOW_ALL, hooks: [] };
    const executor = new StreamingToolExecutor(env, testContext());
    executor.addTool({ id: '1', name: 'Unsafe', input: { key: 'w' } });
    executor.addTool({ id: '2', name: 'Safe', input: { key: 'a' } });
    executor.addTool({ id: '3', name: 'Safe', input: { key: 'b' } });
    executor.addTool({ id: '4', name: 'Unsafe', input: { key: 'v' } });
    open(gates, 'w');
    await settle();
    // b finishes first, but modifiers of the safe batch apply in call order, after both.
    open(gates, 'b');
    await settle();
    expect(executor.currentContext.turnId).toBe('turn_test+w');
    open(gates, 'a');
    open(gates, 'v');
    await collect(executor);
    expect(seen).toEqual(['w:turn_test', 'a:turn_test+w', 'b:turn_test+w', 'v:turn_test+w+a+b']);
    expect(executor.currentContext.turnId).toBe('turn_test+w+a+b+v');
  });

  it('forwards progress while the call runs, before any result', async () => {
    const events: string[] = [];
    const gates = new Map<string, Deferred>();
    const tool = gatedTool('Safe', { safe: true, events, gates, onCall: (_, ctx) => ctx.onProgress?.('half way') });
    const env: ToolUseEnv = { pool: assembleToolPool({ builtins: [tool] }), permissions: ALLOW_ALL, hooks: [] };
    const executor = new StreamingToolExecutor(env, testContext());
    executor.addTool({ id: '1', name: 'Safe', input: { key: 'a' } });
    await settle();
    expect([...executor.getCompletedResults()]).toEqual([{ type: 'progress', toolUseId: '1', toolName: 'Safe', progress: 'half way' }]);
    expect(executor.statusOf('1')).toBe('executing');
    open(gates, 'a');
    expect(contents(await collect(executor))).toEqual([['1', 'done a']]);
  });

  it('holds back calls that had not started when an earlier call asks for permission', async () => {
    const { executor, events, gates, add } = setup([], { permissions: { mode: 'default', rules: [], unattended: false } });
    const w = add('Unsafe', { key: 'w' });
    const s = add('Safe', { key: 's' });
    open(gates, 's');
    const results = await collect(executor);
    expect(results.map((r) => (r.type === 'outcome' ? r.outcome.kind : r.type))).toEqual(['ask', 'deferred']);
    expect(results[0]).toMatchObject({
      outcome: { kind: 'ask', toolUseId: w, message: "Claude requested permissions to use Unsafe, but you haven't granted it yet." },
    });
    expect(results[1]).toMatchObject({ block: { id: s } });
    expect(events).toEqual([]);
  });
});

describe('StreamingToolExecutor before a call with effects (the lease check)', () => {
  it('starts safe calls at once and holds an unsafe call until the check resolves', async () => {
    const lease = deferred<void>();
    const beforeUnsafeCall = vi.fn(() => lease.promise);
    const { executor, events, gates, add } = setup([], { beforeUnsafeCall });
    const s = add('Safe', { key: 's' });
    const w = add('Unsafe', { key: 'w' });
    open(gates, 's');
    open(gates, 'w');
    await settle();
    expect(events).toEqual(['start s', 'end s']);
    expect(beforeUnsafeCall).toHaveBeenCalledTimes(1);
    lease.resolve();
    const results = await collect(executor);
    expect(contents(results)).toEqual([
      [s, 'done s'],
      [w, 'done w'],
    ]);
    expect(events).toEqual(['start s', 'end s', 'start w', 'end w']);
  });

  it('runs an unsafe call at once when the check has nothing to wait for', async () => {
    const { executor, events, gates, add } = setup([], { beforeUnsafeCall: () => undefined });
    const w = add('Unsafe', { key: 'w' });
    await settle();
    expect(events).toEqual(['start w']);
    open(gates, 'w');
    expect(contents(await collect(executor))).toEqual([[w, 'done w']]);
  });

  it('never runs an unsafe call whose check fails (the lease was lost), and still gives it a result', async () => {
    const { executor, events, gates, add } = setup([], { beforeUnsafeCall: () => Promise.reject(new Error('lease lost')) });
    const w = add('Unsafe', { key: 'w' });
    open(gates, 'w');
    const results = await collect(executor);
    expect(events).toEqual([]);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ block: { id: w }, outcome: { kind: 'result', result: { is_error: true } } });
    expect(JSON.stringify(results[0])).toContain('lease lost');
  });
});

describe('the deferred helper', () => {
  it('resolves once', async () => {
    const d = deferred<number>();
    d.resolve(1);
    expect(await d.promise).toBe(1);
  });
});
