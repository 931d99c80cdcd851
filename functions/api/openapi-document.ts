import type { OpenAPIHono } from '@hono/zod-openapi';
import { pageHeaders } from './page-headers.ts';
import { REFERENCE_STYLE, REFERENCE_STYLE_PATH, renderReferencePage } from './reference-page.ts';
import type { ApiEnv } from './route-app.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

const DESCRIPTION = `Stratus runs coding-agent sessions: a session owns a workspace and a conversation; each turn runs a prompt through the model and the tools (in an isolated sandbox) and streams its events.

**Auth.** Every \`/v1\` route but this document and the GitHub webhook (signed with \`X-Hub-Signature-256\` instead) needs \`Authorization: Bearer <token>\`; a token sees only its tenant's sessions and schedules (others' answer 404). The remote-agent adapters \`POST /mcp\` (MCP) and \`POST /a2a\` (A2A) take the same tokens and tenants; only the A2A agent card is public.

**Errors.** Every failure answers \`{"error":{"code","message"}}\` (the Error schema) with the status its class fixes: 400 invalid input (the message names the field; nothing is stored), 401, 404 (also for a malformed id), 405 with \`Allow\`, 409 conflicts (\`Retry-After\` where waiting helps), 411, 413 past a size limit (the message names it), 415 for a body that is not \`application/json\`, 429 \`runner_calls_limit\` with \`Retry-After\` when the tenant's sandbox runner calls are all in flight (STRATUS_TENANT_RUNNER_CALLS), 500 the system, 502/503 the model API.

**Retries.** Every POST takes an \`Idempotency-Key\` header: a retry with the same key and the same request gets the first answer again (kept 24 h, \`Idempotent-Replayed: true\`; a streamed turn is replayed by following its events), never a second run; the same key with another request is a 422 \`idempotency_key_reused\`; a retry while the first still runs waits a few seconds, then gets 409 \`idempotency_in_progress\`.

**Pagination.** Listings take \`?limit=&cursor=\` and answer \`nextCursor\` (null on the last page). A cursor from another listing is a 400 \`invalid_cursor\`.

**Streaming.** \`POST …/turns\` and \`GET …/turns/{turnId}/events\` answer Server-Sent Events with \`Accept: text/event-stream\`: each message's \`event\` is a TurnEvent \`type\`, its \`data\` that event as JSON, its \`id\` the event's number (send \`Last-Event-ID\` to resume).`;

/** The reference page runs no script and loads nothing but its stylesheet from this origin. */
const REFERENCE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Registers the bearer scheme and serves the OpenAPI 3.1 document generated from the routes' own
 * schemas, and the reference page rendered from it at /docs (functions/api/reference-page.ts).
 */
export function serveOpenApiDocument(app: OpenAPIHono<ApiEnv>, version: string) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API token (`STRATUS_API_TOKENS`; locally printed by `npm start`)',
  });
  const config = {
    openapi: '3.1.0',
    info: { title: 'Stratus API', version, description: DESCRIPTION },
    security: [{ bearer: [] }],
    tags: [
      { name: 'Sessions', description: 'Sessions, their messages, compaction and Claude Code transcripts' },
      { name: 'Turns', description: 'Running a prompt, and following its events' },
      { name: 'Permissions', description: 'Tool calls that wait for a person' },
      { name: 'Questions', description: "The agent's questions (AskUserQuestion) waiting for a person's answer" },
      { name: 'Plans', description: "The agent's plans (ExitPlanMode) waiting for a person's approval, and how each was decided" },
      { name: 'Workspace', description: "A session's files" },
      { name: 'Schedules', description: 'Prompts run unattended on a cron schedule' },
      { name: 'GitHub', description: 'Connected repositories, the runs their issues start, and the webhook' },
      {
        name: 'Remote agents',
        description: 'The MCP and A2A adapters: other agents hand Stratus tasks in their own protocols, with the same tokens and tenants',
      },
    ],
  };
  app.doc31(OPENAPI_PATH, (c) => ({ ...config, servers: [{ url: new URL(c.req.url).origin }] }));
  // Rendered on the first request, when every route is registered; the routes do not change after.
  let page: string | undefined;
  app.get('/docs', (c) => {
    page ??= renderReferencePage(app.getOpenAPI31Document(config), OPENAPI_PATH);
    return c.html(page, 200, pageHeaders(REFERENCE_CSP, 'no-cache'));
  });
  app.get(REFERENCE_STYLE_PATH, (c) => c.body(REFERENCE_STYLE, 200, { 'content-type': 'text/css; charset=utf-8', ...pageHeaders(REFERENCE_CSP, 'no-cache') }));
}
