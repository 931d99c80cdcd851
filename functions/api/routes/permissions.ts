import { Hono } from 'hono';
import { z } from 'zod';
import { startTurn } from '../../agent/turn.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { LimitError, NotFoundError } from '../../shared/errors.ts';
import { showId } from '../../shared/ids.ts';
import { denialSummary } from '../../permissions/denial-tracking.ts';
import type { PendingApproval } from '../../stores/approval-store.ts';
import type { AuthVariables } from '../auth.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { respondWithTurn, type TurnResponseDeps } from '../turn-response.ts';
import { parseJsonBody } from '../validate.ts';

const answerBody = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  /** Run the call with this input instead (allow only). */
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  /** Keep allowing this call (Bash: this exact command; other tools: the tool) for the session. */
  remember: z.boolean().optional(),
  /** Deny only: what to tell the model instead (deny-with-feedback), e.g. how to go on. */
  message: z.string().min(1).max(10_000).optional(),
});

/** An answer is stored in the approval's DynamoDB item (at most 400 KB) next to the call's own input. */
export const MAX_UPDATED_INPUT_BYTES = 150_000;

/**
 * Durable ask. GET lists what a session waits for; POST answers one call. When the last
 * waiting call has its answer, the turn resumes right here, on whichever instance got the
 * request, and the response is that turn (JSON or SSE, as for POST /turns).
 */
export function permissionRoutes(deps: Pick<Deps, 'sessions' | 'approvals' | 'config' | 'clock'> & DepsOf<typeof startTurn> & TurnResponseDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get('/:id/permissions', async (c) => {
    const record = await deps.sessions.getForTenant(c.req.param('id'), c.get('tenantId'));
    const pending = await deps.approvals.listForSession(record.sessionId);
    return c.json({
      mode: record.settings?.permissionMode ?? deps.config.permissions.defaultMode,
      unattended: record.settings?.unattended === true,
      rules: record.settings?.rules ?? {},
      denials: denialSummary(record.denials),
      pending: pending.map(pendingView),
    });
  });

  app.post('/:id/permissions/:toolUseId', async (c) => {
    const body = await parseJsonBody(c, answerBody);
    const inputBytes = Buffer.byteLength(JSON.stringify(body.updatedInput ?? {}));
    if (inputBytes > MAX_UPDATED_INPUT_BYTES) {
      throw new LimitError(`"updatedInput" takes ${inputBytes} bytes as JSON; at most ${MAX_UPDATED_INPUT_BYTES} are stored with an answer.`, 'request_too_large');
    }
    const sessionId = c.req.param('id');
    const tenantId = c.get('tenantId');
    const toolUseId = c.req.param('toolUseId');
    await deps.sessions.getForTenant(sessionId, tenantId);
    // The model API's own rule for tool_use ids; anything else cannot be waiting (and must not reach the table as a key).
    if (!/^[\w-]{1,256}$/.test(toolUseId)) throw new NotFoundError(`No tool call ${showId(toolUseId)} is waiting for permission in session ${sessionId}.`);
    await deps.approvals.decide(sessionId, toolUseId, {
      decision: body.decision,
      ...(body.decision === 'allow' && body.updatedInput ? { updatedInput: body.updatedInput } : {}),
      remember: body.decision === 'allow' && body.remember === true,
      ...(body.decision === 'deny' && body.message ? { feedback: body.message } : {}),
      decidedAt: new Date(deps.clock()).toISOString(),
    });
    const pending = await deps.approvals.listForSession(sessionId);
    const undecided = pending.filter((p) => p.kind === 'ask' && p.decision === undefined);
    if (undecided.length > 0) return c.json({ status: 'awaiting_permission', pending: undecided.map(pendingView) }, 202);
    const deadlineAt = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId, tenantId, resume: true, deadlineAt });
    return respondWithTurn(c, deps, turn, deadlineAt);
  });

  return app;
}

function pendingView(p: PendingApproval) {
  return {
    toolUseId: p.toolUseId,
    toolName: p.toolName,
    input: p.input,
    kind: p.kind,
    message: p.message ?? null,
    decision: p.decision ?? null,
    turnId: p.turnId,
    createdAt: p.createdAt,
  };
}
