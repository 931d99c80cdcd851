import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, type QueryEvent, type QueryParams } from '../../../functions/agent/query.ts';
import { assembleToolPool } from '../../../functions/tools/registry.ts';
import { readTool } from '../../../functions/tools/read-tool.ts';
import { WorkspaceSession } from '../../../functions/runner-client/workspace-session.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../../../local/scripted-model/server.ts';
import { deferred, gatedTool, instantTool, memoryLogger, open, testContext, type Deferred } from '../../support/fake-tools.ts';
import { withoutCacheControl } from '../../support/request-bodies.ts';

/** Every tool_use in a yielded assistant message has exactly one yielded tool_result. */
function expectOneResultPerToolUse(events: QueryEvent[]) {
  const uses = events.flatMap((e) => (e.type === 'assistant' ? e.response.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : []));
  const results = events.flatMap((e) => (e.type === 'tool_result' ? [e.block.tool_use_id] : []));
  expect(uses.length).toBeGreaterThan(0);
  expect([...results].sort()).toEqual([...uses].sort());
}

describe('the query loop and its tool results', () => {
  let model: ScriptedModelServer;
  let client: Anthropic;
  const events: string[] = [];
  const gates = new Map<string, Deferred>();
  const started = new Map<string, Deferred>();
  const gate = gatedTool('Gate', {
    safe: false,
    events,
    gates,
    onCall: (input) => started.get(input.key)?.resolve(),
  });

  beforeAll(async () => {
    model = await startScriptedModelServer();
    client = new Anthropic({ apiKey: 'test', baseURL: model.url, maxRetries: 0 });
  });
  afterAll(() => model.close());

  function params(overrides: Partial<QueryParams> = {}): QueryParams {
    const controller = new AbortController();
    return {
      client,
      model: 'test-model',
      maxTokens: 1000,
      system: 'test',
      messages: [{ role: 'user', content: 'go' }],
      registry: assembleToolPool({ builtins: [gate, instantTool('Instant'), readTool] }),
      toolContext: testContext(overrides.signal ?? controller.signal),
      permissions: { mode: 'bypassPermissions', rules: [], unattended: false },
      signal: controller.signal,
      ...overrides,
    };
  }

  async function run(p: QueryParams, onEvent?: (e: QueryEvent) => Promise<void> | void): Promise<QueryEvent[]> {
    const out: QueryEvent[] = [];
    for await (const e of query(p)) {
      out.push(e);
      await onEvent?.(e);
    }
    return out;
  }

  it('starts a tool when its block closes, while the model is still streaming', async () => {
    const aStarted = deferred();
    started.set('a', aStarted);
    model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'Gate', input: { key: 'a' } },
          { type: 'text', text: 'streaming on' },
        ],
      },
      { content: [{ type: 'text', text: 'done' }] },
    );
    const out = await run(params(), async (e) => {
      // If tools only started after the whole message, this would wait forever.
      if (e.type === 'text_delta' && e.text === 'streaming on') {
        await aStarted.promise;
        open(gates, 'a');
      }
    });
    expect(out.map((e) => e.type)).toEqual(['text_delta', 'assistant', 'tool_result', 'text_delta', 'assistant', 'done']);
    expect(withoutCacheControl(model.requests.at(-1)!.body.messages.at(-1))).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'done a' }],
    });
  });

  it("forwards a running tool's progress before the model message has ended", async () => {
    const pStarted = deferred();
    const progressTool = gatedTool('Progress', {
      safe: true,
      events,
      gates,
      onCall: (_input, ctx) => {
        ctx.onProgress?.({ percent: 50 });
        pStarted.resolve();
      },
    });
    model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_p', name: 'Progress', input: { key: 'p' } },
          { type: 'text', text: 'meanwhile' },
        ],
      },
      { content: [{ type: 'text', text: 'done' }] },
    );
    const out = await run(params({ registry: assembleToolPool({ builtins: [progressTool] }) }), async (e) => {
      if (e.type === 'text_delta' && e.text === 'meanwhile') await pStarted.promise;
      if (e.type === 'tool_progress') open(gates, 'p');
    });
    expect(out.map((e) => e.type).slice(0, 4)).toEqual(['text_delta', 'tool_progress', 'assistant', 'tool_result']);
    expect(out[1]).toEqual({ type: 'tool_progress', toolUseId: 'toolu_p', toolName: 'Progress', progress: { percent: 50 } });
  });

  it('gives every tool_use one result when the turn is aborted mid-tool', async () => {
    const controller = new AbortController();
    const bStarted = deferred();
    started.set('b', bStarted);
    model.enqueue({
      content: [
        { type: 'tool_use', id: 'toolu_b', name: 'Gate', input: { key: 'b' } },
        { type: 'tool_use', id: 'toolu_c', name: 'Gate', input: { key: 'c' } },
      ],
    });
    void bStarted.promise.then(() => controller.abort());
    const out = await run(params({ signal: controller.signal, toolContext: testContext(controller.signal) }));
    expectOneResultPerToolUse(out);
    expect(out.at(-1)).toEqual({ type: 'done', stopReason: 'aborted' });
    expect(out.find((e) => e.type === 'tool_result')).toMatchObject({ block: { tool_use_id: 'toolu_b', is_error: true, content: 'b was aborted' } });
    expect(events).not.toContain('start c');
  });

  it('turns a runner failure into an error result and carries on', async () => {
    const failingRunner = new WorkspaceSession({
      deps: {
        runner: { invoke: async () => Promise.reject(new Error('Runner invocation timed out after 900s')) },
        workspaceCredentials: { forWorkspace: async () => ({ accessKeyId: 'a', secretAccessKey: 'b' }) },
        config: { bucket: 'b' },
        log: memoryLogger().log,
      },
      sessionId: 'ses',
      workspace: { id: 'ws', version: 0 },
      cwd: '/workspace',
    });
    model.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: '/workspace/a.txt' } }] },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    const p = params();
    const out = await run({ ...p, toolContext: { ...p.toolContext, workspace: failingRunner } });
    expectOneResultPerToolUse(out);
    expect(out.find((e) => e.type === 'tool_result')).toMatchObject({
      block: { tool_use_id: 'toolu_r', is_error: true, content: 'Runner invocation timed out after 900s' },
    });
    expect(out.at(-1)).toEqual({ type: 'done', stopReason: 'end_turn' });
  });

  it('records the calls that started before a stream broke, each with one result', async () => {
    // Events: message_start, A start, A delta, A stop, B start | break.
    model.enqueue({
      content: [
        { type: 'tool_use', id: 'toolu_x', name: 'Instant', input: {} },
        { type: 'tool_use', id: 'toolu_y', name: 'Instant', input: {} },
      ],
      breakAfterEvents: 5,
      // Without a pause the server drops its unflushed writes when it cuts the connection.
      delayMs: 10,
    });
    const out = await run(params());
    const assistant = out.find((e) => e.type === 'assistant');
    expect(assistant?.type === 'assistant' && assistant.response.content.map((b) => (b.type === 'tool_use' ? b.id : b.type))).toEqual(['toolu_x']);
    expectOneResultPerToolUse(out);
    expect(out.at(-1)).toMatchObject({ type: 'done', stopReason: 'model_error' });
  });

  it('checkpoints after a round of tool results when told to, with every result in', async () => {
    model.enqueue({
      content: [
        { type: 'tool_use', id: 'toolu_s1', name: 'Instant', input: {} },
        { type: 'tool_use', id: 'toolu_s2', name: 'Instant', input: {} },
      ],
    });
    const before = model.requests.length;
    const out = await run(params({ shouldCheckpoint: () => true }));
    expectOneResultPerToolUse(out);
    expect(out.at(-1)).toEqual({ type: 'done', stopReason: 'checkpoint' });
    expect(model.requests.length - before).toBe(1);
  });

  it('gives every tool_use a result when the model-call bound is hit', async () => {
    model.enqueue({ content: [{ type: 'tool_use', id: 'toolu_m', name: 'Instant', input: {} }] });
    // The bound is the maxModelCallsPerTurn budget, asked before each call after the first's results are in.
    let calls = 0;
    const out = await run(params({ beforeModelCall: () => (calls++ >= 1 ? 'budget_exceeded' : undefined) }));
    expectOneResultPerToolUse(out);
    expect(out.at(-1)).toEqual({ type: 'done', stopReason: 'budget_exceeded' });
  });
});
