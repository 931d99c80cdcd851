import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import { startTurn } from '../../turn/turn.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { answerQuestion, declineQuestion } from '../../session/answer-question.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { showId } from '../../shared/ids.ts';
import { waitsForPerson, type PendingApproval } from '../../stores/approval-store.ts';
import type { Context } from 'hono';
import type { ApiEnv } from '../route-app.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp, jsonBodyLimit, untypedResponse } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json, pendingQuestionSchema, sessionIdParam } from '../schemas/common.ts';
import { pendingQuestionView } from '../../session/session-view.ts';
import { handResumedTurnToGithub, type ResumedRunDeps } from '../../github/resumed-run.ts';
import { respondWithTurn, type TurnResponseDeps } from '../turn-response.ts';
import { turnResponses } from './turns.ts';

const text = z.string().min(1).max(10_000);

const answerBody = z
  .strictObject({
    answers: z
      .record(z.string(), z.union([text, z.array(text).max(4)]))
      .optional()
      .describe("Question text → the option's label (multiSelect: a list of labels)"),
    other: z.record(z.string(), text).optional().describe("Question text → an answer in the person's own words instead of (multiSelect: beside) the options"),
    notes: z.record(z.string(), text).optional().describe('Question text → a note for the agent to go with the answer'),
  })
  .openapi('QuestionAnswer');

const declineBody = z
  .strictObject({ feedback: text.optional().describe('What the person tells the agent instead (it reads it after the rejection text)') })
  .openapi('QuestionDecline');

const tags = ['Questions'];

const toolUseParams = z.object({ id: z.string().describe('Session id'), toolUseId: z.string().describe('The `toolUseId` of the question') });

/** What an answer or a decline responds: the resumed turn, or 202 while other calls still wait. */
const closeResponses = {
  ...turnResponses,
  202: {
    description: 'Other calls still wait for a person; or (JSON) the resumed turn continues in another invocation',
    content: {
      'application/json': {
        schema: z.union([
          z.object({ status: z.literal('awaiting_permission'), waiting: z.array(z.string()).describe('The tool_use ids still waiting') }),
          turnResponses[202].content['application/json'].schema,
        ]),
      },
    },
  },
  ...errorResponses(400, 404, 409, 413, 415, 422),
};

const list = createRoute({
  method: 'get',
  path: '/{id}/questions',
  tags,
  summary: "The agent's questions waiting for an answer",
  request: { params: sessionIdParam },
  responses: { 200: json(z.object({ questions: z.array(pendingQuestionSchema) }), 'The waiting questions'), ...errorResponses(404) },
});

const answer = createRoute({
  method: 'post',
  path: '/{id}/questions/{toolUseId}/answer',
  tags,
  summary: 'Answer a waiting question',
  description:
    "Every question of the call needs an answer: an option's label, or the person's own words in `other`. When nothing else waits, the turn resumes here and the response is that turn (JSON or SSE, as for POST …/turns); until then, 202 with what still waits. 409 `already_answered` once the question was answered or its time ran out.",
  middleware: [jsonBodyLimit(256 * 1024)] as const,
  request: {
    params: toolUseParams,
    headers: idempotencyKeyHeader,
    body: { content: { 'application/json': { schema: answerBody } }, required: true },
  },
  responses: closeResponses,
});

const decline = createRoute({
  method: 'post',
  path: '/{id}/questions/{toolUseId}/decline',
  tags,
  summary: 'Decline a waiting question',
  description:
    "The person will not answer: the agent's call gets the rejection text the reference gives a declined question (with `feedback`, the person's words after it) and the turn goes on, resumed here as for an answer. 409 `already_answered` once the question was answered, declined or its time ran out.",
  middleware: [jsonBodyLimit(64 * 1024)] as const,
  request: {
    params: toolUseParams,
    headers: idempotencyKeyHeader,
    body: { content: { 'application/json': { schema: declineBody } }, required: false },
  },
  responses: closeResponses,
});

type QuestionRouteDeps = Pick<Deps, 'sessions' | 'approvals' | 'clock'> & DepsOf<typeof startTurn> & TurnResponseDeps & ResumedRunDeps;

/** The model API's own rule for tool_use ids; anything else cannot be waiting (and must not reach the table as a key). */
function checkedToolUseId(sessionId: string, toolUseId: string): string {
  if (!/^[\w-]{1,256}$/.test(toolUseId)) throw new NotFoundError(`No question ${showId(toolUseId)} waits for an answer in session ${sessionId}.`);
  return toolUseId;
}

/**
 * After an answer or a decline: 202 while other calls wait, else the resumed turn is the response
 * (a GitHub run's session also goes on to its pull request: the worker follows the turn).
 */
async function resumeUnlessWaiting(c: Context<ApiEnv>, deps: QuestionRouteDeps, closed: { sessionId: string; toolUseId: string }, waiting: PendingApproval[]) {
  if (waiting.length > 0) return c.json({ status: 'awaiting_permission' as const, waiting: waiting.map((w) => w.toolUseId) }, 202);
  const deadlineAt = invocationDeadline(c);
  const turn = await startTurn(deps, { sessionId: closed.sessionId, tenantId: c.get('tenantId'), resume: true, deadlineAt });
  await handResumedTurnToGithub(deps, closed.sessionId, closed.toolUseId);
  return untypedResponse(await respondWithTurn(c, deps, turn, deadlineAt));
}

function answerHandler(deps: QuestionRouteDeps): RouteHandler<typeof answer, ApiEnv> {
  return async (c) => {
    const { id: sessionId, toolUseId } = c.req.valid('param');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const waiting = await answerQuestion(deps, sessionId, checkedToolUseId(sessionId, toolUseId), c.req.valid('json'));
    return resumeUnlessWaiting(c, deps, { sessionId, toolUseId }, waiting);
  };
}

function declineHandler(deps: QuestionRouteDeps): RouteHandler<typeof decline, ApiEnv> {
  return async (c) => {
    const { id: sessionId, toolUseId } = c.req.valid('param');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const { feedback } = c.req.valid('json') ?? {};
    const waiting = await declineQuestion(deps, sessionId, checkedToolUseId(sessionId, toolUseId), feedback);
    return resumeUnlessWaiting(c, deps, { sessionId, toolUseId }, waiting);
  };
}

/** The agent's questions (AskUserQuestion): what waits, and the answer that resumes the turn on whichever instance gets it. */
export function questionRoutes(deps: QuestionRouteDeps) {
  const app = createRouteApp();
  app.openapi(list, async (c) => {
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const pending = await deps.approvals.listForSession(record.sessionId);
    return c.json({ questions: pending.filter((p) => p.kind === 'question' && waitsForPerson(p)).map(pendingQuestionView) }, 200);
  });
  app.openapi(answer, answerHandler(deps));
  app.openapi(decline, declineHandler(deps));
  return app;
}
