import { DeleteObjectCommand, ListObjectsV2Command, ListObjectVersionsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { apiClient } from '../support/api-client.ts';
import { chars, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

/** DELETE and PATCH of a session on the local stack. */
describe('deleting and changing a session', () => {
  const fx = useLocalStack({ turn: { heartbeatMs: 200 } });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  async function objectsUnder(prefix: string, workspaceId?: string): Promise<string[]> {
    const s3 = workspaceId
      ? await stack.deps.workspaceStorage(await stack.deps.workspaceCredentials.forWorkspace(workspaceId))
      : await stack.deps.workspaceStorage(await stack.deps.workspaceCredentials.forWorkspace('any'));
    const out = await s3.send(new ListObjectsV2Command({ Bucket: stack.deps.config.bucket, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key!);
  }

  it('answers 404 at once and removes messages, events, persisted results and workspace objects', async () => {
    const sessionId = await api.createSession({ 'a.txt': 'kept?\n' });
    const keep = await api.createSession({ 'b.txt': 'other session\n' });
    // A result large enough to be persisted to S3 (tool-results/{sessionId}/…).
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_big', name: 'Bash', input: { command: `echo made > made.txt; ${chars(40_000, 'x')}` } }] },
      { content: [{ type: 'text', text: 'done' }] },
    );
    const turn = await api.turn(sessionId, 'make things');
    expect(turn.status).toBe(200);
    stack.model!.enqueue({ content: [{ type: 'text', text: 'still here' }] });
    await api.turn(keep, 'hello');
    const workspaceId = (await api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.id as string;
    expect(await objectsUnder(`tool-results/${sessionId}/`)).not.toHaveLength(0);
    expect(await objectsUnder(`workspaces/${workspaceId}/`, workspaceId)).not.toHaveLength(0);
    expect(await stack.deps.events.listAfter(sessionId, turn.json.turnId, -1)).not.toHaveLength(0);

    const deleted = await api.request('DELETE', `/v1/sessions/${sessionId}`);
    expect(deleted.status).toBe(202);
    for (const [method, path, body] of [
      ['GET', ''],
      ['GET', '/messages'],
      ['POST', '/turns', { prompt: 'x' }],
      ['DELETE', ''],
      ['PATCH', '', { title: 'x' }],
    ] as const) {
      const res = await api.request(method, `/v1/sessions/${sessionId}${path}`, body);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const listed = (await api.request('GET', '/v1/sessions?limit=200')).json.sessions.map((s: { id: string }) => s.id);
    expect(listed).not.toContain(sessionId);
    expect(listed).toContain(keep);

    await until(
      () => stack.deps.sessions.get(sessionId),
      (r) => r === undefined,
    );
    expect(await stack.deps.messages.loadFrom(sessionId)).toEqual([]);
    expect(await stack.deps.events.listAfter(sessionId, turn.json.turnId, -1)).toEqual([]);
    expect(await objectsUnder(`tool-results/${sessionId}/`)).toEqual([]);
    expect(await objectsUnder(`workspaces/${workspaceId}/`, workspaceId)).toEqual([]);
    // The other session is untouched.
    expect((await api.messages(keep)).map((m) => m.kind)).toEqual(['prompt', 'assistant']);
  });

  /** Every version and delete marker under a prefix of the (versioned) bucket. */
  async function versionsUnder(prefix: string): Promise<string[]> {
    const s3 = await stack.deps.workspaceStorage(await stack.deps.workspaceCredentials.forWorkspace('any'));
    const out = await s3.send(new ListObjectVersionsCommand({ Bucket: stack.deps.config.bucket, Prefix: prefix }));
    return [...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])].map((v) => `${v.Key}@${v.VersionId}`);
  }

  it('leaves no object, noncurrent version or delete marker of a deleted session in the versioned bucket', async () => {
    const sessionId = await api.createSession({ 'a.txt': 'v1\n' });
    const keep = await api.createSession({ 'b.txt': 'other\n' });
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_big', name: 'Bash', input: { command: `echo v2 > a.txt; ${chars(40_000, 'x')}` } }] },
      { content: [{ type: 'text', text: 'done' }] },
    );
    expect((await api.turn(sessionId, 'change a.txt')).status).toBe(200);
    const workspaceId = (await api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.id as string;
    const keptWorkspace = (await api.request('GET', `/v1/sessions/${keep}`)).json.workspace.id as string;
    // History the bucket keeps: an object overwritten (one noncurrent version) and one deleted (a delete marker).
    const s3 = await stack.deps.workspaceStorage(await stack.deps.workspaceCredentials.forWorkspace(workspaceId));
    const Bucket = stack.deps.config.bucket;
    for (const [Key, Body] of [
      [`workspaces/${workspaceId}/history`, '1'],
      [`workspaces/${workspaceId}/history`, '2'],
      [`spill/${sessionId}/old.json`, '{}'],
    ]) {
      await s3.send(new PutObjectCommand({ Bucket, Key, Body }));
    }
    await s3.send(new DeleteObjectCommand({ Bucket, Key: `spill/${sessionId}/old.json` }));
    const prefixes = [`tool-results/${sessionId}/`, `spill/${sessionId}/`, `workspaces/${workspaceId}/`];
    for (const prefix of prefixes) expect(await versionsUnder(prefix), prefix).not.toEqual([]);
    const keptVersions = await versionsUnder(`workspaces/${keptWorkspace}/`);
    expect(keptVersions).not.toEqual([]);

    expect((await api.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(202);
    await until(
      () => stack.deps.sessions.get(sessionId),
      (r) => r === undefined,
    );
    for (const prefix of prefixes) expect(await versionsUnder(prefix), prefix).toEqual([]);
    expect(await versionsUnder(`workspaces/${keptWorkspace}/`)).toEqual(keptVersions);
  });

  it('stops a running turn of a deleted session before removing its data', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: 'sleep 120' } }] });
    const started = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'sleep' }, { prefer: 'respond-async' });
    expect(started.status).toBe(202);
    await until(
      () => stack.deps.events.listAfter(sessionId, started.json.turnId, -1),
      (e) => e.some((x) => x.event.type === 'tool_use'),
    );
    await new Promise((r) => setTimeout(r, 500));
    expect((await api.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(202);
    // Gone well before the 120 s command could have finished: it was killed and the turn ended.
    await until(
      () => stack.deps.sessions.get(sessionId),
      (r) => r === undefined,
    );
    expect(await stack.deps.messages.loadFrom(sessionId)).toEqual([]);
  });

  it('changes title, permission mode, rules and budgets with PATCH, and validates them', async () => {
    const sessionId = await api.createSession();
    const res = await api.request('PATCH', `/v1/sessions/${sessionId}`, {
      title: 'renamed',
      settings: { permissionMode: 'plan', rules: { deny: ['Bash(rm:*)'] } },
      budgets: { maxTurns: 3, maxCostUsd: 0.5 },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ title: 'renamed', permissions: { mode: 'plan' } });
    expect(res.json.budgets.maxTurns).toEqual({ limit: 3, spent: 0, left: 3 });
    expect(res.json.budgets.maxCostUsd).toEqual({ limit: 0.5, spent: 0, left: 0.5 });
    const stored = await stack.deps.sessions.get(sessionId);
    expect(stored!.settings).toEqual({ permissionMode: 'plan', rules: { deny: ['Bash(rm:*)'] } });

    const removed = await api.request('PATCH', `/v1/sessions/${sessionId}`, { budgets: { maxTurns: null } });
    expect(removed.json.budgets.maxTurns).toEqual({ limit: null, spent: 0, left: null });
    expect(removed.json.budgets.maxCostUsd.limit).toBe(0.5);

    for (const bad of [{ budgets: { maxTurns: -1 } }, { budgets: { maxNothing: 1 } }, { settings: { rules: { allow: ['Bash(('] } } }, { title: 7 }]) {
      const r = await api.request('PATCH', `/v1/sessions/${sessionId}`, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
  });

  it('refuses a settings change while a turn runs (the turn writes the settings it works with), but takes budgets', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'slowly '.repeat(60) }], delayMs: 40 });
    const started = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'slow' }, { prefer: 'respond-async' });
    await until(
      () => api.request('GET', `/v1/sessions/${sessionId}`),
      (r) => r.json.status === 'running',
    );
    const settings = await api.request('PATCH', `/v1/sessions/${sessionId}`, { settings: { permissionMode: 'default' } });
    expect(settings.status).toBe(409);
    expect(settings.json.error.code).toBe('session_busy');
    const budgets = await api.request('PATCH', `/v1/sessions/${sessionId}`, { budgets: { maxTokens: 1_000_000 } });
    expect(budgets.status).toBe(200);
    await until(
      () => api.request('GET', `/v1/sessions/${sessionId}`),
      (r) => r.json.status === 'idle',
    );
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.lastTurn).toMatchObject({ turnId: started.json.turnId, stopReason: 'end_turn' });
  });
});
