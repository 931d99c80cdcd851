import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Role, TaskState, type Message, type Part, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIBRARY_QUESTION } from '../support/questions.ts';
import { useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

const PUSH_TOKEN = 'push-token-0123456789abcdef';

/** A webhook receiver on loopback: every POST's body and headers. */
async function startReceiver() {
  const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ body, headers: req.headers });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(r)) };
}

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const data = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });
let messages = 0;
const message = (parts: Part[], taskId = ''): Message => ({
  messageId: `m${++messages}`,
  contextId: '',
  taskId,
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const request = (msg: Message, extra: Partial<SendMessageRequest> = {}): SendMessageRequest => ({
  tenant: '',
  message: msg,
  configuration: undefined,
  metadata: undefined,
  ...extra,
});
const partText = (parts: Part[] | undefined) => (parts ?? []).flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('\n');
const asTask = (result: unknown): Task => {
  expect(result).toHaveProperty('status');
  return result as Task;
};
const collect = async (stream: AsyncGenerator<StreamResponse>) => {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
};

/**
 * Stratus as an A2A agent (/.well-known/agent-card.json, JSON-RPC at /a2a), driven by the
 * official SDK's client against the local stack with the scripted demo model (a `backticked
 * command` in a prompt runs it).
 */
describe('the A2A endpoint', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  // The operator lets outbound calls reach exactly the receiver (STRATUS_PRIVATE_NETWORK_ALLOW).
  const fx = useLocalStack(() => ({
    turn: { heartbeatMs: 200 },
    settings: { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: [`127.0.0.1:${receiver.port}`] } },
  }));
  // Made on first use: the stack (and its URL) starts in useLocalStack's own beforeAll.
  let connected: Promise<Client> | undefined;
  const a2a = () => {
    const withToken: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${fx.stack.token}`);
      return fetch(input, { ...init, headers });
    };
    connected ??= new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })] }).createFromUrl(fx.stack.apiUrl);
    return connected;
  };

  it('publishes an agent card with its skills, interfaces and the bearer scheme', async () => {
    const res = await fetch(`${fx.stack.apiUrl}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as Record<string, any>;
    expect(card).toMatchObject({
      name: 'Stratus',
      capabilities: { streaming: true, pushNotifications: true },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      supportedInterfaces: [
        { url: `${fx.stack.apiUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${fx.stack.apiUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
    });
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(['fix-issue', 'run-task']);
  });

  it('refuses a call without a tenant token, and answers bad JSON-RPC with an error, not a 500', async () => {
    const client = await a2a();
    const unauthenticated = await fetch(`${fx.stack.apiUrl}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthenticated.status).toBe(401);
    const post = (body: string) =>
      fetch(`${fx.stack.apiUrl}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.stack.token}` }, body });
    const notJson = await post('{not json');
    expect(notJson.status).toBe(200);
    expect(((await notJson.json()) as any).error.code).toBe(-32700);
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'NoSuchMethod', params: {} }));
    expect(((await unknown.json()) as any).error.code).toBe(-32601);
    const tooLarge = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { pad: 'x'.repeat(5 * 1024 * 1024) } }));
    expect(tooLarge.status).toBe(413);
    const get = await fetch(`${fx.stack.apiUrl}/a2a`, { headers: { authorization: `Bearer ${fx.stack.token}` } });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    await expect(client.sendMessage(request(message([text('hi')]), { metadata: { files: ['not', 'a', 'map'] } }))).rejects.toThrow(/metadata is not valid/);
    await expect(client.getTask({ tenant: '', id: 'ses_nope' })).rejects.toThrow(/not found/i);
    await expect(client.sendMessage(request(message([data({ only: 'data' })])))).rejects.toThrow(/no text part/);
  });

  it('sends a message: a new task runs its turn to the end, with the answer and the diff as artifacts', async () => {
    const client = await a2a();
    const result = asTask(
      await client.sendMessage(
        request(message([text('please run `echo changed > hello.txt && cat hello.txt`')]), { metadata: { files: { 'hello.txt': 'hello\n' } } }),
      ),
    );
    expect(result.id).toMatch(/^ses_/);
    expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partText(result.status?.message?.parts)).toContain('ok: changed');
    const [answer, diff] = result.artifacts;
    expect(answer).toMatchObject({ artifactId: 'answer' });
    expect(partText(answer!.parts)).toContain('ok: changed');
    expect(diff).toMatchObject({ artifactId: 'workspace-diff' });
    expect(partText(diff!.parts)).toContain('-hello\n+changed\n');
    expect(result.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_AGENT]);

    const again = await client.getTask({ tenant: '', id: result.id, historyLength: 1 });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(again.history).toHaveLength(1);
    // The next message on the task is its next turn, in the same workspace.
    const next = asTask(await client.sendMessage(request(message([text('run `cat hello.txt`')], result.id))));
    expect(partText(next.status?.message?.parts)).toContain('ok: changed');

    // A v0.3 client's method names reach the same task (the SDK's compat layer translates).
    const legacy = await fetch(`${fx.stack.apiUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.stack.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { id: result.id } }),
    });
    expect(((await legacy.json()) as any).result).toMatchObject({ kind: 'task', id: result.id, status: { state: 'completed' } });
  }, 90_000);

  it('streams a message: the task first, its steps, the artifacts and the final status', async () => {
    const client = await a2a();
    const events = await collect(client.sendMessageStream(request(message([text('run `echo streamed`')]))));
    const cases = events.map((e) => e.payload?.$case);
    expect(cases[0]).toBe('task');
    expect(cases.at(-1)).toBe('statusUpdate');
    const steps = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [partText(e.payload.value.status?.message?.parts)] : []));
    expect(steps.slice(0, 3)).toEqual(['Turn started', 'Running Bash', 'Bash finished']);
    const last = events.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(
      events.filter((e) => e.payload?.$case === 'artifactUpdate').map((e) => e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.artifactId),
    ).toEqual(['answer', 'workspace-diff']);
  }, 90_000);

  it("streams a v0.3 client's message/stream through the SDK's compat layer", async () => {
    const res = await fetch(`${fx.stack.apiUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${fx.stack.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'legacy-1',
        method: 'message/stream',
        params: { message: { kind: 'message', messageId: 'l1', role: 'user', parts: [{ kind: 'text', text: 'run `echo legacy`' }] } },
      }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const results = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(results.every((r) => r.id === 'legacy-1' && r.error === undefined)).toBe(true);
    expect(results[0].result).toMatchObject({ kind: 'task', status: { state: 'working' } });
    expect(results.at(-1).result).toMatchObject({ kind: 'status-update', status: { state: 'completed' } });
  }, 90_000);

  it('cancels a running task, and resubscribes to one from another call', async () => {
    const client = await a2a();
    const started = asTask(await client.sendMessage(request(message([text('run `echo started; sleep 120`')]), { configuration: returnAtOnce })));
    expect(started.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await until(
      async () => (await fx.api.request('GET', `/v1/sessions/${started.id}`)).json.status,
      (status) => status === 'running',
    );
    const resubscribed = collect(client.resubscribeTask({ tenant: '', id: started.id }));
    await new Promise((r) => setTimeout(r, 1500));
    const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const events = await resubscribed;
    expect(events[0]?.payload?.$case).toBe('task');
    const last = events.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: '', id: started.id, metadata: undefined })).rejects.toThrow(/no running turn/);
    await expect(collect(client.resubscribeTask({ tenant: '', id: started.id }))).rejects.toThrow(/canceled/);
  }, 90_000);

  it('waits for permission (input-required), answered by the next message, and pushes each end to the signed webhook', async () => {
    const client = await a2a();
    const push = { tenant: '', id: '', taskId: '', url: `http://127.0.0.1:${receiver.port}/hook`, token: PUSH_TOKEN, authentication: undefined };
    const waiting = asTask(
      await client.sendMessage(
        request(message([text('run `echo hi > made.txt`')]), {
          metadata: { permissionMode: 'default' },
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: push, returnImmediately: false },
        }),
      ),
    );
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(partText(waiting.status?.message?.parts)).toContain('Bash waits for permission');
    await expect(client.sendMessage(request(message([text('maybe later')], waiting.id)))).rejects.toThrow(/waits for an answer/);

    const done = asTask(await client.sendMessage(request(message([text('allow')], waiting.id))));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partText(done.artifacts[1]?.parts)).toContain('+hi');

    await until(
      async () => receiver.received.length,
      (n) => n >= 2,
    );
    const states = receiver.received.map((r) => JSON.parse(r.body).task.status.state);
    expect(states).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);
    for (const { body, headers } of receiver.received) {
      expect(headers['x-a2a-notification-token']).toBe(PUSH_TOKEN);
      const expected = `v1=${createHmac('sha256', PUSH_TOKEN).update(`${headers['x-stratus-timestamp']}.${body}`).digest('hex')}`;
      expect(headers['x-stratus-signature']).toBe(expected);
    }
    // A turn started with returnImmediately runs in its own invocation (a continuation): its end is pushed from there.
    const later = asTask(await client.sendMessage(request(message([text('run `echo later`')], waiting.id), { configuration: returnAtOnce })));
    expect(later.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await until(
      async () => receiver.received.length,
      (n) => n >= 3,
    );
    expect(receiver.received).toHaveLength(3);
    expect(JSON.parse(receiver.received[2]!.body).task.status).toMatchObject({
      state: 'TASK_STATE_COMPLETED',
      message: { parts: [{ text: expect.stringContaining('ok: later') }] },
    });
    const configs = await client.listTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, pageSize: 10, pageToken: '' });
    expect(configs.configs.map((c) => c.url)).toEqual([push.url]);
    const refused = { ...push, taskId: waiting.id, url: 'http://10.0.0.1/hook' };
    await expect(client.createTaskPushNotificationConfig(refused)).rejects.toThrow(/refused/);
    await expect(client.createTaskPushNotificationConfig({ ...push, taskId: waiting.id, token: 'short' })).rejects.toThrow(/token of 16 to 500/);
    await expect(client.createTaskPushNotificationConfig({ ...push, taskId: waiting.id, id: 'a b' })).rejects.toThrow(/config id/);
    const listed = await client.listTasks({
      tenant: '',
      contextId: '',
      status: 0 as TaskState,
      pageSize: 2,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    expect(listed.tasks[0]?.id).toBe(waiting.id);
  }, 90_000);

  it("waits for the agent's question (input-required), answered by the next message's text", async () => {
    const client = await a2a();
    fx.stack.model!.enqueue({
      content: [
        { type: 'text', text: 'Let me ask.' },
        { type: 'tool_use', id: 'toolu_a2a_q1', name: 'AskUserQuestion', input: { questions: [LIBRARY_QUESTION] } },
      ],
    });
    const waiting = asTask(await client.sendMessage(request(message([text('add dates')]))));
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const shown = waiting.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content;
    expect(shown?.$case === 'data' && shown.value).toEqual({ waiting: [{ toolUseId: 'toolu_a2a_q1', kind: 'question', questions: [LIBRARY_QUESTION] }] });
    await expect(client.sendMessage(request(message([data({ decision: 'allow' })], waiting.id)))).rejects.toThrow(/No tool call waits for permission/);

    const done = asTask(await client.sendMessage(request(message([text('dayjs')], waiting.id))));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partText(done.status?.message?.parts)).toContain('ok: User has answered your questions: "Which library should we use?"="dayjs"');
  }, 90_000);
});

const returnAtOnce = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
