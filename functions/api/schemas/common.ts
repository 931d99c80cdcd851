import { z } from '@hono/zod-openapi';
import { budgetsSchema } from '../../stores/budgets.ts';

/** The one error body every failure answers with (functions/api/error-response.ts). */
export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.string().describe('Stable machine-readable code, e.g. `invalid_request`, `not_found`, `session_busy`, `request_too_large`'),
      message: z.string().describe('What went wrong and what to do, for people'),
    }),
  })
  .openapi('Error');

const ERROR_MEANINGS = {
  400: 'Invalid input (the message names the field); nothing was stored',
  401: 'Missing, invalid or revoked bearer token',
  403: 'A valid token without the right: a tenant token on /v1/admin, the admin token elsewhere',
  404: "No such resource for this tenant (a malformed id, or another tenant's)",
  405: 'The path exists, but not with this method (see `Allow`)',
  409: 'Conflicts with the current state (`Retry-After` where waiting helps)',
  411: 'The body needs a Content-Length',
  413: 'Past a size limit; the message names it',
  415: 'The body must be `application/json`',
  422: 'This `Idempotency-Key` was used with a different request (`idempotency_key_reused`); use a new key',
  429: 'The tenant has as many sandbox runner calls in flight as STRATUS_TENANT_RUNNER_CALLS allows (`runner_calls_limit`); retry after `Retry-After` seconds',
  500: 'The system or the sandbox runner failed; details are in the server logs',
  502: 'The model API failed',
  503: 'The model API is overloaded or rate-limiting; retry later',
} as const;

type ErrorStatus = keyof typeof ERROR_MEANINGS;
type ErrorResponse = { description: string; content: { 'application/json': { schema: typeof errorBodySchema } } };

/** Error responses for a route: the statuses it can answer besides success (and 401, 500), all with the Error body. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]): Record<S | 401 | 500, ErrorResponse> {
  const out = {} as Record<S | 401 | 500, ErrorResponse>;
  for (const status of [401, ...statuses, 500] as (S | 401 | 500)[]) {
    out[status] = { description: ERROR_MEANINGS[status], content: { 'application/json': { schema: errorBodySchema } } };
  }
  return out;
}

/** A JSON response of one schema. */
export function json<S extends z.ZodType>(schema: S, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** Token counts. On a turn's events this is the turn's running total; on a stored message, that one model call's. */
export const usageSchema = z
  .object({
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    cacheReadInputTokens: z.number().int().optional(),
    cacheCreationInputTokens: z.number().int().optional(),
    costUsd: z.number().optional().describe('What these tokens cost in USD, priced from the model price table (STRATUS_MODEL_PRICES)'),
  })
  .openapi('Usage');

/**
 * What a session may spend (functions/stores/budgets.ts; enforced by functions/agent/budget.ts):
 * every budget is optional, absent means no limit of that kind. Rebuilt from its shape: a schema
 * made before @hono/zod-openapi loaded has no `.openapi()`.
 */
export const budgetsApiSchema = z.strictObject(budgetsSchema.shape).openapi('Budgets');

/**
 * Cursor pagination, the one style of every listing: pass the previous page's `nextCursor` as
 * `cursor`; `nextCursor` is null on the last page.
 */
export const pageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Items per page (1–200)'),
  cursor: z.string().optional().describe("The previous page's `nextCursor`"),
});

export const nextCursorSchema = z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page');

export const sessionIdParam = z.object({
  id: z
    .string()
    .describe('Session id (`ses_…`)')
    .openapi({ param: { name: 'id', in: 'path' }, example: 'ses_0mi3k2x9a4f1c2d3e4f5a6b7c8' }),
});

/**
 * `Idempotency-Key` on creating POSTs (functions/api/idempotency.ts): a retry with the same key
 * and the same request gets the first response again (`Idempotent-Replayed: true`) and never runs
 * twice; the same key with another request is a 422; a retry while the first still runs waits a
 * few seconds, then 409 `idempotency_in_progress` with `Retry-After`.
 */
export const idempotencyKeyHeader = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .describe(
      '1–255 visible ASCII characters. A retry with the same key and request replays the first response (`Idempotent-Replayed: true`, kept 24 h) instead of running again; the same key with another request is 422',
    ),
});

/** One entry of an agent's task list (functions/tools/todo-write-tool.ts). */
export const todoItemSchema = z
  .object({
    content: z.string().describe('What to do, imperative ("Run the tests")'),
    status: z.enum(['pending', 'in_progress', 'completed']),
    activeForm: z.string().describe('The entry in the present continuous ("Running the tests"), shown while it is in progress'),
  })
  .openapi('TodoItem');

/** One question of an AskUserQuestion call (functions/tools/ask-user-question-tool.ts), as the model wrote it. */
export const askedQuestionSchema = z
  .object({
    question: z.string(),
    header: z.string().describe('A short label for the question'),
    options: z.array(
      z.object({
        label: z.string().describe('What an answer names'),
        description: z.string(),
        preview: z.string().optional(),
      }),
    ),
    multiSelect: z.boolean().describe('Several options may be picked'),
  })
  .openapi('AskedQuestion');

/** A waiting AskUserQuestion call as the API shows it. */
export const pendingQuestionSchema = z
  .object({
    toolUseId: z.string(),
    turnId: z.string(),
    questions: z.array(askedQuestionSchema),
    createdAt: z.string(),
    expiresAt: z.string().describe('When the turn goes on without an answer'),
  })
  .openapi('PendingQuestion');

/** An ExitPlanMode call's plan as the API shows it (functions/session/plan-approval.ts). */
export const planSchema = z
  .object({
    toolUseId: z.string(),
    turnId: z.string(),
    plan: z.string().describe('The plan as the agent wrote it, in Markdown'),
    status: z.enum(['waiting', 'approved', 'rejected']),
    createdAt: z.string(),
    decidedAt: z.string().nullable(),
    approvedPlan: z.string().nullable().describe('The plan as approved (the edited text when the person edited it)'),
    mode: z.string().nullable().describe('The permission mode the approval continued in'),
    feedback: z.string().nullable().describe("A rejection's feedback"),
  })
  .openapi('Plan');
