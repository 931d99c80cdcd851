import { createRoute, z } from '@hono/zod-openapi';
import { startTurn } from '../../turn/turn.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { LimitError, NotFoundError } from '../../shared/errors.ts';
import { showId } from '../../shared/ids.ts';
import { denialSummary } from '../../permissions/denial-tracking.ts';
import { assertValidRules } from '../../session-settings/session-settings.ts';
import { waitsForPerson, type ApprovalStore, type PendingApproval } from '../../stores/approval-store.ts';
import { suggestRule } from '../../tools/rule-suggestion.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp, jsonBodyLimit, untypedResponse } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json, sessionIdParam } from '../schemas/common.ts';
import { denialListSchema } from '../schemas/sessions.ts';
import { respondWithTurn, type TurnResponseDeps } from '../turn-response.ts';
import { turnResponses } from './turns.ts';

const answerBody = z
  .strictObject({
    decision: z.enum(['allow', 'deny']),
    /** Run the call with this input instead (allow only). */
    updatedInput: z.record(z.string(), z.unknown()).optional().describe('Run the call with this input instead (allow only)'),
    /** Keep allowing this call (Bash: this exact command; other tools: the tool) for the session. */
    remember: z.boolean().optional().describe('Keep allowing this call (Bash: this exact command; other tools: the tool) for the session'),
    /** Allow only: keep allowing every call this permission rule matches for the session, instead of what `remember` keeps. */
    rule: z
      .string()
      .min(1)
      .max(1_000)
      .optional()
      .describe(
        'Allow only: keep allowing every call this permission rule matches (e.g. `Bash(npm test:*)`) for the session, instead of what `remember` keeps',
      ),
    /** Deny only: what to tell the model instead (deny-with-feedback), e.g. how to go on. */
    message: z.string().min(1).max(10_000).optional().describe('Deny only: what to tell the model instead (deny-with-feedback), e.g. how to go on'),
  })
  .openapi('PermissionAnswer');

/** An answer is stored in the approval's DynamoDB item (at most 400 KB) next to the call's own input. */
export const MAX_UPDATED_INPUT_BYTES = 150_000;

const pendingSchema = z
  .object({
    toolUseId: z.string(),
    toolName: z.string(),
    input: z.unknown(),
    kind: z.string().describe('`ask`: waits for an answer'),
    message: z.string().nullable(),
    decision: z.enum(['allow', 'deny']).nullable(),
    turnId: z.string(),
    createdAt: z.string(),
    suggestedRule: z
      .string()
      .describe(
        'A rule to offer for `rule` when allowing: for Bash, a prefix rule for the one part that needed approval, or the exact command when a prefix would cover more than was asked about',
      ),
  })
  .openapi('PendingPermission');

const tags = ['Permissions'];

const list = createRoute({
  method: 'get',
  path: '/{id}/permissions',
  tags,
  summary: 'What the session waits for, its mode, rules and denials',
  request: { params: sessionIdParam },
  responses: {
    200: json(
      z.object({
        mode: z.string(),
        unattended: z.boolean(),
        rules: z.record(z.string(), z.unknown()),
        denials: denialListSchema,
        pending: z.array(pendingSchema),
      }),
      'The permission state',
    ),
    ...errorResponses(404),
  },
});

const answer = createRoute({
  method: 'post',
  path: '/{id}/permissions/{toolUseId}',
  tags,
  summary: 'Answer a waiting tool call',
  description:
    'When the last waiting call has its answer, the turn resumes here and the response is that turn (JSON or SSE, as for POST …/turns); until then, 202 with what still waits.',
  middleware: [jsonBodyLimit(2 * 1024 * 1024)] as const,
  request: {
    params: z.object({ id: z.string().describe('Session id'), toolUseId: z.string().describe('The `toolUseId` of the permission_request') }),
    headers: idempotencyKeyHeader,
    body: { content: { 'application/json': { schema: answerBody } }, required: true },
  },
  responses: {
    ...turnResponses,
    202: {
      description: 'Other calls still wait for answers; or (JSON) the resumed turn continues in another invocation',
      content: {
        'application/json': {
          schema: z.union([
            z.object({ status: z.literal('awaiting_permission'), pending: z.array(pendingSchema) }),
            turnResponses[202].content['application/json'].schema,
          ]),
        },
      },
    },
    ...errorResponses(400, 404, 409, 413, 415, 422),
  },
});

/** An answer as the approval store keeps it: what applies to its decision, and when it was given. */
function storedAnswer(body: z.output<typeof answerBody>, now: number): Parameters<ApprovalStore['decide']>[2] {
  return {
    decision: body.decision,
    ...(body.decision === 'allow' && body.updatedInput ? { updatedInput: body.updatedInput } : {}),
    remember: body.decision === 'allow' && (body.remember === true || body.rule !== undefined),
    ...(body.decision === 'allow' && body.rule !== undefined ? { rememberRule: body.rule } : {}),
    ...(body.decision === 'deny' && body.message ? { feedback: body.message } : {}),
    decidedAt: new Date(now).toISOString(),
  };
}

/**
 * Durable ask. GET lists what a session waits for; POST answers one call. When the last
 * waiting call has its answer, the turn resumes right here, on whichever instance got the
 * request, and the response is that turn (JSON or SSE, as for POST /turns).
 */
export function permissionRoutes(deps: Pick<Deps, 'sessions' | 'approvals' | 'config' | 'clock'> & DepsOf<typeof startTurn> & TurnResponseDeps) {
  const app = createRouteApp();

  app.openapi(list, async (c) => {
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const pending = await deps.approvals.listForSession(record.sessionId);
    return c.json(
      {
        mode: record.settings?.permissionMode ?? deps.config.permissions.defaultMode,
        unattended: record.settings?.unattended === true,
        rules: record.settings?.rules ?? {},
        denials: denialSummary(record.denials),
        pending: await pendingViews(pending),
      },
      200,
    );
  });

  app.openapi(answer, async (c) => {
    const body = c.req.valid('json');
    const inputBytes = Buffer.byteLength(JSON.stringify(body.updatedInput ?? {}));
    if (inputBytes > MAX_UPDATED_INPUT_BYTES) {
      throw new LimitError(
        `"updatedInput" takes ${inputBytes} bytes as JSON; at most ${MAX_UPDATED_INPUT_BYTES} are stored with an answer.`,
        'request_too_large',
      );
    }
    if (body.rule !== undefined) assertValidRules({ allow: [body.rule] }, 'rule');
    const { id: sessionId, toolUseId } = c.req.valid('param');
    const tenantId = c.get('tenantId');
    await deps.sessions.getForTenant(sessionId, tenantId);
    // The model API's own rule for tool_use ids; anything else cannot be waiting (and must not reach the table as a key).
    if (!/^[\w-]{1,256}$/.test(toolUseId)) throw new NotFoundError(`No tool call ${showId(toolUseId)} is waiting for permission in session ${sessionId}.`);
    await deps.approvals.decide(sessionId, toolUseId, storedAnswer(body, deps.clock()));
    const pending = await deps.approvals.listForSession(sessionId);
    const undecided = pending.filter(waitsForPerson);
    if (undecided.length > 0) return c.json({ status: 'awaiting_permission' as const, pending: await pendingViews(undecided) }, 202);
    const deadlineAt = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId, tenantId, resume: true, deadlineAt });
    return untypedResponse(await respondWithTurn(c, deps, turn, deadlineAt));
  });

  return app;
}

/** What waits, with the rule a person could remember for it (safe under part-by-part Bash matching). */
async function pendingView(p: PendingApproval) {
  return {
    toolUseId: p.toolUseId,
    toolName: p.toolName,
    input: p.input,
    kind: p.kind,
    message: p.message ?? null,
    decision: p.decision ?? null,
    turnId: p.turnId,
    createdAt: p.createdAt,
    suggestedRule: await suggestRule(p.toolName, p.input),
  };
}

function pendingViews(pending: PendingApproval[]) {
  return Promise.all(pending.map(pendingView));
}
