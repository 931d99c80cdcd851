import { validate } from '@readme/openapi-parser';
import { readFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import { beforeAll, describe, expect, it } from 'vitest';
import type { paths } from '../../cli/generated/api.d.ts';
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/api-types.ts';
import { parseSse } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

describe('the OpenAPI document', () => {
  const fx = useLocalStack({ brain: () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } }) });
  let document: any;
  beforeAll(async () => {
    // No token: the document is public.
    const res = await fetch(`${fx.stack.apiUrl}/v1/openapi.json`);
    expect(res.status).toBe(200);
    document = await res.json();
  });

  it('is a valid OpenAPI 3.1 document describing every route, auth, errors and the SSE events', async () => {
    const result = await validate(structuredClone(document));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /v1/sessions',
        'GET /v1/sessions',
        'GET /v1/sessions/{id}',
        'GET /v1/sessions/{id}/messages',
        'POST /v1/sessions/{id}/turns',
        'GET /v1/sessions/{id}/turns/{turnId}/events',
        'GET /v1/sessions/{id}/permissions',
        'GET /v1/sessions/{id}/questions',
        'POST /v1/sessions/{id}/permissions/{toolUseId}',
        'POST /v1/sessions/{id}/questions/{toolUseId}/answer',
        'GET /v1/sessions/{id}/plans',
        'GET /v1/sessions/{id}/plans/{toolUseId}',
        'POST /v1/sessions/{id}/plans/{toolUseId}',
        'POST /v1/sessions/{id}/compact',
        'GET /v1/sessions/{id}/transcript.jsonl',
        'POST /v1/sessions/import',
        'PUT /v1/sessions/{id}/workspace/archive',
        'POST /v1/sessions/{id}/workspace/git',
        'GET /v1/sessions/{id}/workspace/files',
        'GET /v1/sessions/{id}/workspace/files/{path}',
        'GET /v1/sessions/{id}/workspace/archive',
        'POST /v1/sessions/{id}/workspace/uploads',
        'POST /v1/sessions/{id}/workspace/archive',
        'GET /v1/sessions/{id}/workspace/diff',
        'POST /v1/admin/tokens',
        'GET /v1/admin/tokens',
        'DELETE /v1/admin/tokens/{tokenId}',
        'POST /v1/schedules',
        'GET /v1/schedules',
        'GET /v1/schedules/{id}',
        'PATCH /v1/schedules/{id}',
        'DELETE /v1/schedules/{id}',
        'POST /v1/schedules/{id}/run',
        'PATCH /v1/sessions/{id}',
        'DELETE /v1/sessions/{id}',
        'POST /v1/sessions/{id}/turns/{turnId}/interrupt',
        'POST /v1/github/repositories',
        'GET /v1/github/repositories',
        'GET /v1/github/repositories/{owner}/{name}',
        'PATCH /v1/github/repositories/{owner}/{name}',
        'DELETE /v1/github/repositories/{owner}/{name}',
        'DELETE /v1/github/repositories/{owner}/{name}/environment',
        'GET /v1/github/runs',
        'GET /v1/github/repositories/{owner}/{name}/items/{number}',
        'POST /v1/github/repositories/{owner}/{name}/items/{number}/budget',
        'GET /v1/github/stats',
        'POST /v1/github/webhook',
        'GET /v1/tenant/settings',
        'PUT /v1/tenant/settings',
        'POST /v1/github/installations/setup-url',
        'GET /v1/github/installations',
        'GET /v1/github/installations/setup',
        'POST /v1/admin/github/installations',
        'GET /v1/admin/github/installations',
        'DELETE /v1/admin/github/installations/{installationId}',
        'POST /v1/admin/github/repositories',
        'GET /v1/admin/async-failures',
        'POST /v1/admin/async-failures/{id}/redrive',
        'POST /v1/admin/async-failures/redrive',
        'GET /v1/sessions/{id}/agents',
        'GET /v1/sessions/{id}/agents/{agentId}/messages',
        'GET /v1/sessions/{id}/tool-results/{toolUseId}',
        'POST /mcp',
        'POST /a2a',
        'GET /.well-known/agent-card.json',
      ].sort(),
    );
    // Every operation names its error body; the SSE stream names each event's data schema.
    for (const item of Object.values(document.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(item)) {
        // The A2A agent card is public (discovery): it names the bearer scheme the endpoint takes.
        if (op.security?.length === 0 && op.tags.includes('Remote agents')) continue;
        expect(op.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
    const sse = document.paths['/v1/sessions/{id}/turns'].post.responses['200'].content['text/event-stream'].schema;
    expect(sse).toEqual({ $ref: '#/components/schemas/TurnEvent' });
    const union = document.components.schemas.TurnEvent;
    expect(union.discriminator.propertyName).toBe('type');
    expect(union.oneOf.map((s: { $ref: string }) => s.$ref.split('/').at(-1))).toContain('TurnEndEvent');
    expect(document.components.schemas.TurnEndEvent.properties.stopReason.enum).toEqual(expect.arrayContaining(['crashed', 'interrupted', 'budget_exceeded']));
  });

  it("describes main's turn control: Idempotency-Key on every POST but the webhook and the admin routes, Prefer: respond-async, and the signed webhook without a token", () => {
    const paths = document.paths as Record<string, Record<string, any>>;
    const headerNames = (op: any) => (op.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
    for (const [path, item] of Object.entries(paths)) {
      if (!item.post) continue;
      // A replayed token creation would have to keep the plaintext token: the admin routes take no key
      // (assigning an installation again is a 200, connecting a repository again a 409).
      // The remote-agent adapters speak their protocols, which have no Idempotency-Key.
      if (path === '/v1/github/webhook' || path.startsWith('/v1/admin/') || !path.startsWith('/v1/'))
        expect(headerNames(item.post)).not.toContain('idempotency-key');
      else
        expect({ path, headers: headerNames(item.post), replayConflict: Object.keys(item.post.responses) }).toMatchObject({
          headers: expect.arrayContaining(['idempotency-key']),
          replayConflict: expect.arrayContaining(['422']),
        });
    }
    const startTurn = paths['/v1/sessions/{id}/turns']!.post;
    expect(headerNames(startTurn)).toContain('prefer');
    expect(startTurn.responses['202'].content['application/json'].schema.anyOf).toContainEqual({ $ref: '#/components/schemas/AsyncTurn' });
    const hook = paths['/v1/github/webhook']!.post;
    expect(hook.security).toEqual([]);
    expect(headerNames(hook)).toEqual(expect.arrayContaining(['x-hub-signature-256', 'x-github-delivery', 'x-github-event']));
    expect(paths['/v1/sessions/{id}/turns/{turnId}/interrupt']!.post.responses).toHaveProperty('202');
    expect(document.components.schemas.PermissionAnswer.properties).toHaveProperty('message');
  });

  it('describes both remote-agent adapters as JSON-RPC POST paths behind the bearer token, and the public agent card', () => {
    const paths = document.paths as Record<string, Record<string, any>>;
    for (const path of ['/mcp', '/a2a']) {
      const op = paths[path]!.post;
      expect(op.security).toBeUndefined();
      expect(document.security).toEqual([{ bearer: [] }]);
      expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/JsonRpcRequest' });
      expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'text/event-stream']);
      expect(op.responses).toHaveProperty('401');
    }
    expect(paths['/a2a']!.post.description).toContain('message/send');
    expect(paths['/.well-known/agent-card.json']!.get.security).toEqual([]);
  });

  it('matches the committed generated client types (npm run api-types rewrites them)', async () => {
    expect(await generateApiTypes(document)).toBe(readFileSync(API_TYPES_FILE, 'utf8'));
  });

  it('drives the README walk-through through the generated client', async () => {
    const api = createClient<paths, `application/${string}`>({ baseUrl: fx.stack.apiUrl, headers: { authorization: `Bearer ${fx.stack.token}` } });
    const created = await api.POST('/v1/sessions', { body: { files: { 'hello.txt': 'hello\nworld\n' } } });
    expect(created.response.status).toBe(201);
    const sid = created.data!.id;

    fx.stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_wc', name: 'Bash', input: { command: 'wc -l hello.txt' } }] },
      { content: [{ type: 'text', text: 'It has 2 lines.' }] },
    );
    const streamed = await api.POST('/v1/sessions/{id}/turns', {
      params: { path: { id: sid } },
      body: { prompt: 'please run `wc -l hello.txt`' },
      headers: { accept: 'text/event-stream' },
      parseAs: 'text',
    });
    expect(streamed.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(streamed.data as unknown as string);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolUseId: 'toolu_wc', isError: false, content: '2 hello.txt' });
    expect(events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });

    fx.stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: '/workspace/hello.txt' } }] },
      { content: [{ type: 'text', text: 'It says hello.' }] },
    );
    const json = await api.POST('/v1/sessions/{id}/turns', { params: { path: { id: sid } }, body: { prompt: 'read /workspace/hello.txt' } });
    expect(json.response.status).toBe(200);
    expect(json.data).toMatchObject({ sessionId: sid, stopReason: 'end_turn', error: null });
    const turnId = json.data!.turnId;

    const status = await api.GET('/v1/sessions/{id}', { params: { path: { id: sid } } });
    expect(status.data).toMatchObject({ id: sid, status: 'idle', turnCount: 2, lastTurn: { turnId, stopReason: 'end_turn' } });

    const firstPage = await api.GET('/v1/sessions/{id}/messages', { params: { path: { id: sid }, query: { limit: 3 } } });
    expect(firstPage.data!.messages.map((m) => m.seq)).toEqual([0, 1, 2]);
    const rest = await api.GET('/v1/sessions/{id}/messages', { params: { path: { id: sid }, query: { limit: 50, cursor: firstPage.data!.nextCursor! } } });
    expect(rest.data!.messages.at(-1)).toMatchObject({ role: 'assistant', turnId, content: [{ type: 'text', text: 'It says hello.' }] });
    expect(rest.data!.nextCursor).toBeNull();

    const files = await api.GET('/v1/sessions/{id}/workspace/files', { params: { path: { id: sid } } });
    expect(files.data!.files).toEqual([expect.objectContaining({ path: 'hello.txt', type: 'file', size: 12 })]);

    const log = await api.GET('/v1/sessions/{id}/turns/{turnId}/events', { params: { path: { id: sid, turnId } } });
    expect(log.data!.done).toBe(true);
    expect(log.data!.events.at(-1)!.event).toMatchObject({ type: 'turn_end', turnId });

    // An error answers the documented Error body.
    const missing = await api.GET('/v1/sessions/{id}', { params: { path: { id: 'ses_nope' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ error: { code: 'not_found' } });
  });

  it("serves the reference at /docs without a token: every operation, from this origin only, with no script and the console's page headers", async () => {
    const res = await fetch(`${fx.stack.apiUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=UTF-8');
    const html = await res.text();
    expect(html).toContain('<title>Stratus API</title>');
    expect(html).toContain('href="/v1/openapi.json"');
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) expect(html).toContain(`id="op-${method}-${path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}"`);
    }
    // Nothing runs, and nothing is loaded from anywhere else: every reference is a path or an anchor here.
    expect(html).not.toMatch(/<script|<iframe|<object|<embed|\son\w+=/i);
    const references = [...html.matchAll(/\s(?:src|href|action)="([^"]*)"/g)].map((m) => m[1]!);
    expect(references.filter((ref) => !/^(\/(?!\/)|#)/.test(ref))).toEqual([]);
    expect(references).toContain('/docs/reference.css');

    const style = await fetch(`${fx.stack.apiUrl}/docs/reference.css`);
    expect(style.status).toBe(200);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await style.text()).not.toMatch(/url\(|@import/);
    for (const answer of [res, style]) {
      const csp = answer.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/script-src|https?:|\*/);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });
});
