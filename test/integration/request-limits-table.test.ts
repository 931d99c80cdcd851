import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_TRANSCRIPT_BYTES } from '../../functions/api/routes/context.ts';
import { MAX_WEBHOOK_BYTES } from '../../functions/api/routes/github-webhook.ts';
import { MAX_UPDATED_INPUT_BYTES } from '../../functions/api/routes/permissions.ts';
import { MAX_SCHEDULE_BYTES } from '../../functions/api/routes/schedules.ts';
import { MAX_SETTINGS_BYTES } from '../../functions/api/routes/sessions.ts';
import { MAX_TURN_BODY_BYTES } from '../../functions/api/routes/turns.ts';
import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from '../../functions/api/validate.ts';
import { createTimeOrderedId } from '../../functions/shared/ids.ts';
import { MAX_CURSOR_CHARS } from '../../functions/stores/cursor.ts';
import { UPLOAD_EXPIRY_SECONDS } from '../../functions/workspaces/presigned-upload.ts';
import { MAX_DIFF_BYTES, MAX_DIFF_FILE_BYTES, MAX_DIFF_FILES } from '../../sandbox-runner/ops/workspace-diff-op.ts';
import { MAX_KEY_BYTES, MAX_KEY_COMPONENT_BYTES, MAX_SEED_FILES, MAX_SEED_JSON_BYTES } from '../../sandbox-runner/common/file-keys.ts';
import { DEFAULT_ARCHIVE_LIMITS, MAX_LINK_TARGET_BYTES } from '../../sandbox-runner/workspace/archive-guards.ts';
import { DEFAULT_WORKSPACE_LIMITS } from '../../sandbox-runner/common/workspace-limits.ts';
import { configSchema } from '../../functions/deps/config.ts';
import { unscripted, useLocalStack } from '../support/stack-fixture.ts';

type Schema = {
  $ref?: string;
  maxLength?: number;
  minLength?: number;
  maximum?: number;
  minimum?: number;
  default?: unknown;
  pattern?: string;
  properties?: Record<string, Schema>;
};

const defaultStorageQuota = (): number => configSchema.shape.tenantStorageQuotaBytes.parse(undefined);

/** 200,000 · 2 MiB · 512 KiB: how the README writes numbers and sizes. */
const n = (value: number) => value.toLocaleString('en-US');
const size = (bytes: number) => {
  for (const [unit, factor] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (bytes % factor === 0) return `${bytes / factor} ${unit}`;
  return `${n(bytes)} bytes`;
};

/** The README's request-limits table: first cell → the whole row. */
function readmeLimitRows(): Map<string, { limit: string; answer: string }> {
  const readme = readFileSync('README.md', 'utf8');
  const table = /### Request limits\n\n([\s\S]*?)\n\n/.exec(readme)![1]!;
  const rows = table
    .split('\n')
    .slice(2)
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s\|$/g, '')));
  return new Map(rows.map(([what, limit, answer]) => [what!, { limit: limit!, answer: answer! }]));
}

/**
 * The README's table of request limits, checked against the code that enforces them: the
 * constants, the route schemas as the served OpenAPI document states them, and for the limit
 * users meet first (the prompt) the answer itself.
 */
describe('the README table of request limits', () => {
  const fx = useLocalStack({ brain: unscripted });
  type OpenApi = {
    paths: Record<string, Record<string, { parameters?: { name: string; schema: Schema }[]; requestBody?: { content: Record<string, { schema: Schema }> } }>>;
    components: { schemas: Record<string, Schema> };
  };
  let doc: OpenApi;
  beforeAll(async () => {
    doc = (await (await fetch(`${fx.stack.apiUrl}/v1/openapi.json`)).json()) as OpenApi;
  });
  const resolve = (schema: Schema): Schema => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1)!]! : schema);
  const bodyField = (path: string, method: string, field: string) =>
    resolve(resolve(doc.paths[path]![method]!.requestBody!.content['application/json']!.schema).properties![field]!);
  const param = (path: string, method: string, name: string) => doc.paths[path]![method]!.parameters!.find((p) => p.name === name)!.schema;
  const chars = (s: Schema) => (s.minLength ? `${n(s.minLength)}–${n(s.maxLength!)}` : n(s.maxLength!));

  /** Each row's first cell, what its limit cell must state (from the code), and its answer. */
  const expected = (): [string, string[], string][] => {
    const turnsPrompt = bodyField('/v1/sessions/{id}/turns', 'post', 'prompt');
    const schedule = (f: string) => bodyField('/v1/schedules', 'post', f);
    const git = (f: string) => bodyField('/v1/sessions/{id}/workspace/git', 'post', f);
    const sessionsLimit = param('/v1/sessions', 'get', 'limit');
    const eventsLimit = param('/v1/sessions/{id}/turns/{turnId}/events', 'get', 'limit');
    const tenantPattern = bodyField('/v1/admin/tokens', 'post', 'tenantId').pattern!;
    expect(schedule('prompt')).toMatchObject({ minLength: turnsPrompt.minLength, maxLength: turnsPrompt.maxLength });
    return [
      ["prompt (`POST …/turns`, a schedule's `prompt`)", [`${chars(turnsPrompt)} characters`], '400 `invalid_request`'],
      [
        'JSON request body',
        [
          size(MAX_JSON_BODY_BYTES),
          `a turn ${size(MAX_TURN_BODY_BYTES)}`,
          `a transcript import ${size(MAX_TRANSCRIPT_BYTES)}`,
          `a GitHub webhook delivery ${size(MAX_WEBHOOK_BYTES)}`,
        ],
        '413 `request_too_large`',
      ],
      ['JSON nesting', [`${MAX_JSON_DEPTH} levels`], '400 `invalid_request`'],
      ["seed `files` (a session's, a schedule's)", [`${n(MAX_SEED_FILES)} files`, `${n(MAX_SEED_JSON_BYTES)} bytes as JSON`], '413 `request_too_large`'],
      [
        'file path (seed names, `…/workspace/files/<path>`)',
        [`${n(MAX_KEY_COMPONENT_BYTES)} bytes a component`, `${n(MAX_KEY_BYTES)} in all`],
        '400 `invalid_request`',
      ],
      [
        'workspace (archive import, presigned upload)',
        [
          `${n(DEFAULT_WORKSPACE_LIMITS.maxFiles)} files`,
          `${size(DEFAULT_WORKSPACE_LIMITS.maxBytes)} in all`,
          `${size(DEFAULT_WORKSPACE_LIMITS.maxFileBytes)} a file`,
          `valid ${UPLOAD_EXPIRY_SECONDS} s`,
        ],
        '413 `workspace_limit`',
      ],
      [
        'archive entries',
        [
          `at most ${DEFAULT_ARCHIVE_LIMITS.maxDepth} levels deep`,
          `link targets ${n(MAX_LINK_TARGET_BYTES)} bytes`,
          `${n(DEFAULT_ARCHIVE_LIMITS.maxEntries)} entries`,
          `at most ${DEFAULT_ARCHIVE_LIMITS.maxExpansionRatio}× the compressed size (${size(DEFAULT_ARCHIVE_LIMITS.expansionFloorBytes)} always allowed)`,
        ],
        '400 `invalid_request` · 413 `workspace_limit`',
      ],
      [
        "a tenant's stored workspace bytes",
        ['`STRATUS_TENANT_STORAGE_QUOTA_BYTES`', `(${size(defaultStorageQuota())})`],
        '413 `storage_quota` (a tool gets it as an error result)',
      ],
      [
        "a tenant's sandbox runner calls in flight",
        ['`STRATUS_TENANT_RUNNER_CALLS`', `(${configSchema.shape.tenantRunnerCalls.parse(undefined)})`],
        '429 `runner_calls_limit` with `Retry-After` (a tool call waits up to 60 s, then gets it as an error result)',
      ],
      ['`settings` (create, PATCH)', [`${n(MAX_SETTINGS_BYTES)} bytes as JSON`], '413 `request_too_large`'],
      ['a schedule as stored (with its prompt and seed files)', [`${n(MAX_SCHEDULE_BYTES)} bytes`], '413 `request_too_large`'],
      [
        'permission answer',
        [
          `\`message\` ${chars(bodyField('/v1/sessions/{id}/permissions/{toolUseId}', 'post', 'message'))} characters`,
          `\`updatedInput\` ${n(MAX_UPDATED_INPUT_BYTES)} bytes as JSON`,
        ],
        '400 `invalid_request` · 413 `request_too_large`',
      ],
      [
        '`title` (session, `?title=` of an import)',
        [`${chars(bodyField('/v1/sessions', 'post', 'title'))} characters`, `${chars(param('/v1/sessions/import', 'post', 'title'))} characters`],
        '400 `invalid_request`',
      ],
      [
        'schedule fields',
        [`\`name\` ${chars(schedule('name'))}`, `\`cron\` ${chars(schedule('cron'))}`, `\`timezone\` ${chars(schedule('timezone'))} characters`],
        '400 `invalid_request`',
      ],
      [
        'git import',
        [
          `\`url\` ${chars(git('url'))}`,
          `\`ref\` ${chars(git('ref'))}`,
          `\`token\` ${chars(git('token'))} characters`,
          `\`depth\` ${git('depth').minimum}–${n(git('depth').maximum!)}`,
        ],
        '400 `invalid_request`',
      ],
      ['transcript export `?cwd=`', [`${chars(param('/v1/sessions/{id}/transcript.jsonl', 'get', 'cwd'))} characters`], '400 `invalid_request`'],
      [
        'GitHub connection `label` · admin token `label`',
        [`${chars(bodyField('/v1/github/repositories', 'post', 'label'))} · ${chars(bodyField('/v1/admin/tokens', 'post', 'label'))} characters`],
        '400 `invalid_request`',
      ],
      ['tenant id (admin tokens)', [`${Number(/\{0,(\d+)\}\$$/.exec(tenantPattern)![1]) + 1} characters`], '400 `invalid_request`'],
      ['`Idempotency-Key`', ['1–255 visible ASCII characters'], '400 `invalid_request`'],
      [
        'page size `?limit=`',
        [
          `${sessionsLimit.minimum}–${sessionsLimit.maximum} (default ${sessionsLimit.default}) on every listing`,
          `${eventsLimit.minimum}–${n(eventsLimit.maximum!)} (default ${eventsLimit.default}) on a turn's JSON events`,
        ],
        '400 `invalid_request`',
      ],
      ['`?cursor=`', [`${n(MAX_CURSOR_CHARS)} characters`], '400 `invalid_cursor`'],
      [
        'ids in paths',
        ['9 base36 characters + 16 hex digits', '`stk_` + 12 hex digits', '1–256 of `[A-Za-z0-9_-]`'],
        '404 `not_found` (a malformed id is simply not found)',
      ],
      [
        'workspace diff',
        [`${n(MAX_DIFF_FILES)} paths`, `${size(MAX_DIFF_BYTES)} of diff text`, `over ${size(MAX_DIFF_FILE_BYTES)} not diffed`],
        '200 with `truncated` / `skipped`',
      ],
    ];
  };

  it('states every limit as the code enforces it, and nothing else', () => {
    const rows = readmeLimitRows();
    const checks = expected();
    expect([...rows.keys()]).toEqual(checks.map(([what]) => what));
    for (const [what, parts, answer] of checks) {
      for (const part of parts) expect(rows.get(what)!.limit, what).toContain(part);
      expect(rows.get(what)!.answer, what).toBe(answer);
    }
  });

  it('answers as the table says past the limits a new user meets', async () => {
    const sessionId = await fx.api.createSession();
    const long = await fx.api.turn(sessionId, 'x'.repeat(200_001));
    expect(long.status).toBe(400);
    expect(long.json.error.code).toBe('invalid_request');
    const tooLong = await fx.api.request('POST', '/v1/sessions', {}, { 'idempotency-key': 'k'.repeat(256) });
    expect(tooLong.status).toBe(400);
    expect((await fx.api.request('POST', '/v1/sessions', {}, { 'idempotency-key': 'k'.repeat(255) })).status).toBe(201);
    expect((await fx.api.request('GET', '/v1/sessions?limit=201')).status).toBe(400);
    expect((await fx.api.request('GET', `/v1/sessions?cursor=${'A'.repeat(MAX_CURSOR_CHARS + 1)}`)).json.error.code).toBe('invalid_cursor');
    // Ids: the documented shape is the one handed out, and anything else is not found.
    expect(sessionId).toMatch(/^ses_[0-9a-z]{9}[0-9a-f]{16}$/);
    expect(createTimeOrderedId('turn')).toMatch(/^turn_[0-9a-z]{9}[0-9a-f]{16}$/);
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}x`)).status).toBe(404);
  });
});
