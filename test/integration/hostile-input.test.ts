import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SEED_JSON_BYTES } from '../../sandbox-runner/common/file-keys.ts';
import { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

interface Fixture {
  session: string;
  otherTenantSession: string;
  schedule: string;
  /** nextCursor values handed out by real listings. */
  cursors: { otherTenantSessions: string; otherTenantSchedules: string; otherSessionMessages: string; ownSessions: string };
}

interface Case {
  method: string;
  path: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
  /** A raw body (bytes or text) instead of JSON. */
  raw?: Uint8Array | string;
  status: number;
  code?: string;
  message?: RegExp;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const schedule = (extra: Record<string, unknown>) => ({ name: 'n', cron: '0 3 * * *', prompt: 'p', ...extra });
let deep: unknown = 'x';
for (let i = 0; i < 40; i++) deep = { a: deep };

/** Each bad request and what it must answer. None may be a 500; none may store anything. */
const CASES: Record<string, Case> = {
  // Cursors: foreign, forged, malformed.
  "another tenant's sessions cursor": {
    method: 'GET',
    path: (f) => `/v1/sessions?cursor=${f.cursors.otherTenantSessions}`,
    status: 400,
    code: 'invalid_cursor',
  },
  "another tenant's schedules cursor": {
    method: 'GET',
    path: (f) => `/v1/schedules?cursor=${f.cursors.otherTenantSchedules}`,
    status: 400,
    code: 'invalid_cursor',
  },
  'a sessions cursor used on schedules': { method: 'GET', path: (f) => `/v1/schedules?cursor=${f.cursors.ownSessions}`, status: 400, code: 'invalid_cursor' },
  "another session's messages cursor": {
    method: 'GET',
    path: (f) => `/v1/sessions/${f.session}/messages?cursor=${f.cursors.otherSessionMessages}`,
    status: 400,
    code: 'invalid_cursor',
  },
  'a forged messages cursor of the wrong shape': {
    method: 'GET',
    path: (f) => `/v1/sessions/${f.session}/messages?cursor=${b64({ sessionId: f.session, seq: 'x' })}`,
    status: 400,
    code: 'invalid_cursor',
  },
  'a forged sessions cursor with extra keys': {
    method: 'GET',
    path: () => `/v1/sessions?cursor=${b64({ tenantId: 'tenant-a', createdAt: 'x', sessionId: 'ses_x', extra: 1 })}`,
    status: 400,
    code: 'invalid_cursor',
  },
  'a cursor that is not base64url JSON': { method: 'GET', path: () => '/v1/sessions?cursor=%7B%7D', status: 400, code: 'invalid_cursor' },
  'a cursor that is JSON but an array': { method: 'GET', path: () => `/v1/schedules?cursor=${b64([1])}`, status: 400, code: 'invalid_cursor' },

  // Ids that cannot exist.
  'a 10 KB session id': { method: 'GET', path: () => `/v1/sessions/${'x'.repeat(10_000)}`, status: 404, message: /^Session x{64}… not found\.$/ },
  'a 10 KB session id, on messages': { method: 'GET', path: () => `/v1/sessions/ses_${'0'.repeat(10_000)}/messages`, status: 404 },
  'a 10 KB session id, on a turn': { method: 'POST', path: () => `/v1/sessions/${'x'.repeat(10_000)}/turns`, body: () => ({ prompt: 'hi' }), status: 404 },
  'a 10 KB schedule id': { method: 'PATCH', path: () => `/v1/schedules/${'x'.repeat(10_000)}`, body: () => ({ enabled: false }), status: 404 },
  'a NUL in a session id': { method: 'GET', path: () => '/v1/sessions/ses_%00', status: 404 },
  'a 5 KB tool use id': {
    method: 'POST',
    path: (f) => `/v1/sessions/${f.session}/permissions/${'t'.repeat(5_000)}`,
    body: () => ({ decision: 'allow' }),
    status: 404,
  },
  'a turn id that cannot exist': { method: 'GET', path: (f) => `/v1/sessions/${f.session}/turns/${'t'.repeat(5_000)}/events`, status: 404 },

  // Workspace file paths in the URL.
  'a lone % in a file path': {
    method: 'GET',
    path: (f) => `/v1/sessions/${f.session}/workspace/files/%`,
    status: 400,
    message: /not valid percent-encoded UTF-8/,
  },
  'a truncated escape in a file path': { method: 'GET', path: (f) => `/v1/sessions/${f.session}/workspace/files/%E0%A4%A`, status: 400 },
  'an escape that is not UTF-8': { method: 'GET', path: (f) => `/v1/sessions/${f.session}/workspace/files/%ff`, status: 400 },
  'no file name': { method: 'GET', path: (f) => `/v1/sessions/${f.session}/workspace/files/`, status: 400, message: /^Name a file after/ },
  'a "." between escaped slashes': {
    method: 'GET',
    path: (f) => `/v1/sessions/${f.session}/workspace/files/d%2f.%2fb.txt`,
    status: 400,
    message: /"\." component/,
  },
  'escaped ".." segments': {
    method: 'GET',
    path: (f) => `/v1/sessions/${f.session}/workspace/files/..%2f..%2fetc%2fpasswd`,
    status: 400,
    message: /"\.\." component/,
  },
  'a NUL in a file path': { method: 'GET', path: (f) => `/v1/sessions/${f.session}/workspace/files/a%00b`, status: 400, message: /NUL/ },
  'a doubled slash in a file path': {
    method: 'GET',
    path: (f) => `/v1/sessions/${f.session}/workspace/files/a%2f%2fb`,
    status: 400,
    message: /empty component/,
  },

  // Seed files of a new session.
  'a NUL in a seed name': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { 'a\0b': 'x' } }),
    status: 400,
    message: /"files": Invalid file path "a\\u0000b": it contains a NUL character/,
  },
  'a seed name component over 255 bytes': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { ['n'.repeat(256)]: 'x' } }),
    status: 400,
    message: /at most 255 are allowed per component/,
  },
  'a seed path over the length limit': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { [`${'d'.repeat(200)}/`.repeat(25).concat('f')]: 'x' } }),
    status: 400,
    message: /at most 3072 are allowed/,
  },
  'a seed that is a file and a directory': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { d: 'x', 'd/y': 'y' } }),
    status: 400,
    message: /"d" cannot be a file and also the directory of "d\/y"/,
  },
  'the same, directory first': { method: 'POST', path: () => '/v1/sessions', body: () => ({ files: { 'd/y': 'y', d: 'x' } }), status: 400 },
  'a doubled slash in a seed name': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { 'a//b': 'x' } }),
    status: 400,
    message: /empty component/,
  },
  'a trailing slash in a seed name': { method: 'POST', path: () => '/v1/sessions', body: () => ({ files: { 'a/': 'x' } }), status: 400 },
  'an absolute seed name': { method: 'POST', path: () => '/v1/sessions', body: () => ({ files: { '/etc/x': 'x' } }), status: 400, message: /absolute/ },
  'seed content that is not base64': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { b: { base64: '!!!' } } }),
    status: 400,
    message: /not valid base64/,
  },
  'a 10 MB seed file': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ files: { big: 'x'.repeat(10 * 1024 * 1024) } }),
    status: 413,
    code: 'request_too_large',
    message: new RegExp(`at most ${MAX_SEED_JSON_BYTES} are accepted`),
  },
  'settings too big to store': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ settings: { rules: { allow: Array.from({ length: 500 }, (_, i) => `Bash(${'x'.repeat(400)}${i})`) } } }),
    status: 413,
    code: 'request_too_large',
  },
  'an over-long allowed domain': {
    method: 'POST',
    path: () => '/v1/sessions',
    body: () => ({ settings: { allowedDomains: [`${'a'.repeat(300)}.com`] } }),
    status: 400,
  },

  // Bodies.
  'a body that is not UTF-8': {
    method: 'POST',
    path: () => '/v1/sessions',
    raw: new Uint8Array([0x7b, 0x22, 0x74, 0x69, 0x74, 0x6c, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    status: 400,
    message: /must be UTF-8 encoded JSON/,
  },
  'an unpaired surrogate in a string': {
    method: 'POST',
    path: () => '/v1/sessions',
    raw: '{"title":"\\ud800"}',
    status: 400,
    message: /"title" is not well-formed Unicode/,
  },
  'an unpaired surrogate in a seed name': { method: 'POST', path: () => '/v1/sessions', raw: '{"files":{"\\udc00":"x"}}', status: 400 },
  'a body that is not JSON': { method: 'POST', path: () => '/v1/sessions', raw: '{not json', status: 400, message: /^Request body must be valid JSON\.$/ },
  'a JSON array body': { method: 'POST', path: () => '/v1/sessions', raw: '[]', status: 400 },
  'a body nested 100,000 deep': { method: 'POST', path: () => '/v1/sessions', raw: `${'['.repeat(100_000)}${']'.repeat(100_000)}`, status: 400 },
  'an answer nested deeper than an item may be': {
    method: 'POST',
    path: (f) => `/v1/sessions/${f.session}/permissions/toolu_x`,
    body: () => ({ decision: 'allow', updatedInput: deep }),
    status: 400,
    message: /nested more than/,
  },
  'a prototype key': { method: 'POST', path: () => '/v1/sessions', raw: '{"__proto__":{"polluted":1}}', status: 400 },
  'a prompt of the wrong type': { method: 'POST', path: (f) => `/v1/sessions/${f.session}/turns`, body: () => ({ prompt: ['x'] }), status: 400 },

  // Schedules: seeds are checked when the schedule is created, not when it fires.
  'a schedule seeding "../x"': {
    method: 'POST',
    path: () => '/v1/schedules',
    body: () => schedule({ files: { '../x': 'x' } }),
    status: 400,
    message: /"\.\." component/,
  },
  'a schedule seeding a NUL name': {
    method: 'POST',
    path: () => '/v1/schedules',
    body: () => schedule({ files: { 'a\0': 'x' } }),
    status: 400,
    message: /NUL/,
  },
  'a schedule seeding a file and a directory': {
    method: 'POST',
    path: () => '/v1/schedules',
    body: () => schedule({ files: { d: 'x', 'd/y': 'y' } }),
    status: 400,
  },
  'a schedule too big for its item': {
    method: 'POST',
    path: () => '/v1/schedules',
    body: () => schedule({ files: { a: 'x'.repeat(500_000) } }),
    status: 413,
    code: 'request_too_large',
  },
  'a schedule prompt too big for its item': {
    method: 'PATCH',
    path: (f) => `/v1/schedules/${f.schedule}`,
    body: () => ({ prompt: '😀'.repeat(199_000) }),
    status: 413,
  },
  'a schedule in a 5 KB session id': { method: 'POST', path: () => '/v1/schedules', body: () => schedule({ sessionId: 'x'.repeat(5_000) }), status: 404 },
  'a 5 KB time zone': { method: 'POST', path: () => '/v1/schedules', body: () => schedule({ timezone: 'x'.repeat(5_000) }), status: 400 },
};

describe('hostile input: a clear 4xx, never a 500, and nothing stored', () => {
  const fx = useLocalStack({ apiTokens: { 'token-a': 'tenant-a', 'token-b': 'tenant-b' } });
  const f = {} as Fixture;
  let api: ReturnType<typeof apiClient>;
  let s3: S3Client;

  /** What a refused request must not change: both tenants' sessions and schedules, and the workspace objects. */
  async function stored() {
    const count = async (client: ReturnType<typeof apiClient>, list: string) => {
      const res = await client.request('GET', `/v1/${list}?limit=200`);
      expect(res.json.nextCursor).toBeNull();
      return res.json[list].length as number;
    };
    const b = apiClient(fx.stack.apiUrl, 'token-b');
    const objects = await s3.send(new ListObjectsV2Command({ Bucket: fx.stack.deps.config.bucket, Prefix: 'workspaces/' }));
    return {
      sessions: [await count(api, 'sessions'), await count(b, 'sessions')],
      schedules: [await count(api, 'schedules'), await count(b, 'schedules')],
      workspaceObjects: objects.KeyCount,
    };
  }

  beforeAll(async () => {
    api = apiClient(fx.stack.apiUrl, 'token-a');
    const b = apiClient(fx.stack.apiUrl, 'token-b');
    s3 = new S3Client({ region: 'us-east-1', endpoint: fx.stack.urls.s3, forcePathStyle: true, credentials: fx.stack.deps.config.localCredentials });
    f.session = await api.createSession({ 'a.txt': 'a', 'd/b.txt': 'b' });
    await api.createSession();
    f.otherTenantSession = await b.createSession();
    await b.createSession();
    const sched = (client: ReturnType<typeof apiClient>) => client.request('POST', '/v1/schedules', schedule({ enabled: false }));
    f.schedule = (await sched(api)).json.id;
    await sched(b);
    await sched(b);
    const imported = await fetch(`${fx.stack.apiUrl}/v1/sessions/import`, {
      method: 'POST',
      headers: { authorization: 'Bearer token-a' },
      body: [
        '{"type":"user","message":{"role":"user","content":"hi"}}',
        '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"yo"}]}}',
      ].join('\n'),
    });
    const withMessages = ((await imported.json()) as { id: string }).id;
    const next = async (client: ReturnType<typeof apiClient>, path: string) => {
      const cursor = (await client.request('GET', path)).json.nextCursor as string | null;
      if (!cursor) throw new Error(`no cursor from ${path}`);
      return cursor;
    };
    f.cursors = {
      otherTenantSessions: await next(b, '/v1/sessions?limit=1'),
      otherTenantSchedules: await next(b, '/v1/schedules?limit=1'),
      otherSessionMessages: await next(api, `/v1/sessions/${withMessages}/messages?limit=1`),
      ownSessions: await next(api, '/v1/sessions?limit=1'),
    };
  });
  afterAll(() => s3?.destroy());

  it('answers each bad request with the status it deserves, a JSON error and nothing stored', async () => {
    const before = await stored();
    expect(before.sessions).toEqual([3, 2]);
    const answers: Record<string, { status: number; code?: string; message?: string }> = {};
    for (const [name, c] of Object.entries(CASES)) {
      const res = await fetch(`${fx.stack.apiUrl}${c.path(f)}`, {
        method: c.method,
        headers: { authorization: 'Bearer token-a', 'content-type': 'application/json' },
        body: c.raw ?? (c.body ? JSON.stringify(c.body(f)) : undefined),
      });
      const json = (await res.json().catch(() => undefined)) as { error?: { code: string; message: string } } | undefined;
      answers[name] = { status: res.status, code: json?.error?.code, message: json?.error?.message };
    }
    for (const [name, c] of Object.entries(CASES)) {
      const got = answers[name]!;
      expect(got.status, `${name}: ${JSON.stringify(got)}`).toBe(c.status);
      expect(got.message, name).toEqual(expect.any(String));
      if (c.code) expect(got.code, name).toBe(c.code);
      if (c.message) expect(got.message, name).toMatch(c.message);
      // Our words, not a stack, a runner's schema dump or a server path.
      expect(got.message, name).not.toMatch(/\/tmp\/|stratus-data|ZodError|"origin"|ENOENT|EEXIST|ENAMETOOLONG|at .*\.ts:/);
    }
    expect(await stored()).toEqual(before);
  }, 120_000);

  it("still pages with cursors it handed out, and a session's own files still download", async () => {
    const page = await api.request('GET', `/v1/sessions?limit=1&cursor=${f.cursors.ownSessions}`);
    expect(page.status).toBe(200);
    expect(page.json.sessions).toHaveLength(1);
    const file = await fetch(`${fx.stack.apiUrl}/v1/sessions/${f.session}/workspace/files/d%2Fb.txt`, { headers: { authorization: 'Bearer token-a' } });
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('b');
  });
});
