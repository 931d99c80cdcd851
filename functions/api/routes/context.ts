import { createRoute, z } from '@hono/zod-openapi';
import { VIRTUAL_ROOT } from '../../../sandbox-runner/common/virtual-paths.ts';
import { compactSession, exportTranscript, importTranscript, parseTranscriptForImport } from '../../session/session-ops.ts';
import { uuidFrom } from '../../context/claude-jsonl.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { createSession } from '../../session/create-session.ts';
import { sessionView } from '../../session/session-view.ts';
import { bodyLimit } from '../body-limit.ts';
import { createRouteApp, untypedResponse } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json, sessionIdParam } from '../schemas/common.ts';
import { sessionSchema } from '../schemas/sessions.ts';
import { MAX_JSON_BODY_BYTES } from '../validate.ts';

const exportQuery = z.object({
  cwd: z
    .string()
    .startsWith('/', 'must be an absolute path')
    .max(4096)
    .default(VIRTUAL_ROOT)
    .describe('The directory the transcript says it ran in (where you will run `claude --resume`)'),
});
const importQuery = z.object({ title: z.string().max(200).optional() });

/** A Claude Code transcript to import: the same bound as a JSON body. */
export const MAX_TRANSCRIPT_BYTES = MAX_JSON_BODY_BYTES;

const tags = ['Sessions'];

const compact = createRoute({
  method: 'post',
  path: '/{id}/compact',
  tags,
  summary: 'Compact the conversation now',
  request: { params: sessionIdParam, headers: idempotencyKeyHeader },
  responses: {
    200: json(
      z.object({ sessionId: z.string(), reloadFromSeq: z.number().int().nullable(), messagesAfterBoundary: z.number().int() }),
      'Where the conversation now restarts',
    ),
    ...errorResponses(400, 404, 409, 422, 502, 503),
  },
});

const transcript = createRoute({
  method: 'get',
  path: '/{id}/transcript.jsonl',
  tags,
  summary: 'The session as a Claude Code transcript',
  description: 'Continue it locally with `claude --resume <x-claude-session-id>` after saving it under `~/.claude/projects/…`.',
  request: { params: sessionIdParam, query: exportQuery },
  responses: {
    200: {
      description: 'Claude Code JSONL',
      headers: { 'x-claude-session-id': { schema: { type: 'string' }, description: 'The session id the transcript uses' } },
      content: { 'application/x-ndjson': { schema: z.string() } },
    },
    ...errorResponses(400, 404),
  },
});

const importRoute = createRoute({
  method: 'post',
  path: '/import',
  tags,
  summary: 'Start a session from a Claude Code transcript',
  middleware: [bodyLimit(MAX_TRANSCRIPT_BYTES)] as const,
  request: {
    query: importQuery,
    headers: idempotencyKeyHeader,
    body: { content: { 'application/x-ndjson': { schema: z.string().describe('Claude Code JSONL') } }, required: true },
  },
  responses: { 201: json(sessionSchema, 'The new session'), ...errorResponses(400, 413, 422) },
});

/** Compaction on demand, and moving sessions between Stratus and a local Claude Code. */
export function contextRoutes(
  deps: Pick<Deps, 'clock'> & DepsOf<typeof compactSession> & DepsOf<typeof exportTranscript> & DepsOf<typeof importTranscript> & DepsOf<typeof createSession>,
) {
  const app = createRouteApp();

  app.openapi(compact, async (c) => {
    return c.json(await compactSession(deps, { sessionId: c.req.valid('param').id, tenantId: c.get('tenantId') }), 200);
  });

  app.openapi(transcript, async (c) => {
    const q = c.req.valid('query');
    const sessionId = c.req.valid('param').id;
    const body = await exportTranscript(deps, { sessionId, tenantId: c.get('tenantId'), cwd: q.cwd });
    const claudeSessionId = uuidFrom(sessionId);
    return untypedResponse(
      c.body(body, 200, {
        'content-type': 'application/x-ndjson; charset=utf-8',
        'content-disposition': `attachment; filename="${claudeSessionId}.jsonl"`,
        'x-claude-session-id': claudeSessionId,
      }),
    );
  });

  app.openapi(importRoute, async (c) => {
    const q = c.req.valid('query');
    const tenantId = c.get('tenantId');
    const items = parseTranscriptForImport(await c.req.text());
    const created = await createSession(deps, { tenantId, title: q.title ?? 'Imported from Claude Code' });
    const record = await importTranscript(deps, { sessionId: created.sessionId, tenantId, items });
    return c.json(sessionView(record, deps.clock(), deps.config), 201);
  });

  return app;
}
