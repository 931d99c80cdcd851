import { SETUP_SOURCES } from '../../stores/setup-record.ts';
import { customAgentSchema } from '../../session-settings/custom-agents.ts';
import { z } from '@hono/zod-openapi';
import { BUDGET_NAMES, type BudgetName } from '../../stores/budgets.ts';
import { nextCursorSchema, pendingQuestionSchema, planSchema, todoItemSchema, usageSchema } from './common.ts';
import { turnStopReasonSchema } from './turn-events.ts';

export const turnSummarySchema = z
  .object({
    turnId: z.string(),
    stopReason: z.string(),
    startedAt: z.string(),
    endedAt: z.string(),
    error: z.string().optional(),
    budget: z.string().optional().describe('With stopReason `budget_exceeded`: which budget'),
    usage: usageSchema.optional().describe("The turn's tokens and cost"),
  })
  .openapi('TurnSummary');

const budgetStateSchema = z.object({
  limit: z.number().nullable().describe('null: no limit of this kind'),
  spent: z.number(),
  left: z.number().nullable(),
});

/** Each budget (functions/agent/budget.ts): per-turn ones count the running turn (0 when none runs), the others the whole session. */
const sessionBudgetsSchema = z
  .object(Object.fromEntries(BUDGET_NAMES.map((name) => [name, budgetStateSchema])) as Record<BudgetName, typeof budgetStateSchema>)
  .openapi('SessionBudgets');

const sessionSourceSchema = z
  .object({ kind: z.literal('github'), repository: z.string(), number: z.number().int(), type: z.enum(['issue', 'pull_request']), url: z.string() })
  .openapi('SessionSource');

/** functions/stores/setup-record.ts */
const setupRecordSchema = z
  .object({
    status: z.enum(['running', 'succeeded', 'failed', 'interrupted']).describe('`interrupted`: the turn running them died; they are not run again'),
    source: z.enum(SETUP_SOURCES).describe("`.stratus/setup.sh`, a repository's or the session's `setup.script`, or the tenant's default"),
    turnId: z.string(),
    startedAt: z.string(),
    endedAt: z.string().optional(),
    durationMs: z.number().optional(),
    exitCode: z.number().int().nullable().optional().describe('null: a signal ended it; absent: it never ran'),
    timedOut: z.boolean().optional(),
    timeoutSeconds: z.number().int(),
    outputTail: z.string().optional().describe('The last 8,000 characters of the merged stdout and stderr'),
    outputTruncated: z.boolean().optional(),
    error: z.string().optional().describe('Why it could not run or finish'),
    allowedDomains: z.array(z.string()).describe("The hosts its commands could reach: registries plus the session's own list"),
    restored: z.boolean().optional().describe('A cached environment was restored instead of running the commands'),
  })
  .openapi('SessionSetup');

const denialSchema = z.object({ tool: z.string(), count: z.number().int(), suggestion: z.string() });

/** The public shape of a session (functions/session/session-view.ts). */
export const sessionSchema = z
  .object({
    id: z.string(),
    title: z.string().nullable(),
    status: z.string().describe('`idle`, `running`, `awaiting_permission`, `failed` (`interrupted`: a dead turn nobody has cleaned up yet)'),
    createdAt: z.string(),
    updatedAt: z.string(),
    messageCount: z.number().int(),
    turnCount: z.number().int(),
    cwd: z.string(),
    workspace: z.object({ id: z.string(), version: z.number().int() }),
    usage: usageSchema.describe("The session's total over all turns, with its cost"),
    budgets: sessionBudgetsSchema.optional(),
    currentTurnId: z.string().nullable(),
    lastTurn: turnSummarySchema.nullable(),
    permissions: z.object({
      mode: z.string().nullable(),
      unattended: z.boolean(),
      hooks: z.array(z.object({ event: z.string(), matcher: z.string().nullable(), url: z.string(), failMode: z.string() })),
      denials: z.array(denialSchema),
    }),
    mcpServers: z
      .record(z.string(), z.object({ type: z.string(), url: z.string(), headers: z.record(z.string(), z.string()) }))
      .describe('The MCP servers as configured, every header value shown as "[redacted]"'),
    toolSearch: z.string().nullable().describe("The session's ToolSearch mode (`standard`, `tst`, `tst-auto`), or null for the default"),
    agents: z.array(customAgentSchema).describe('Custom sub-agents the Agent tool offers beside the built-ins'),
    reloadFromSeq: z.number().int().nullable(),
    source: sessionSourceSchema.nullable().describe('Where the session came from: a GitHub issue or pull request, or null'),
    setup: setupRecordSchema.nullable().describe('What the set-up steps did before the first turn (docs/environments.md), or null when there were none'),
    todos: z.array(todoItemSchema).describe("The agent's task list as its last TodoWrite call left it (empty until it writes one)"),
    questions: z
      .array(pendingQuestionSchema)
      .optional()
      .describe("The agent's questions waiting for an answer (GET /v1/sessions/{id} only): POST …/questions/{toolUseId}/answer"),
    plans: z.array(planSchema).optional().describe("The agent's plans waiting for approval (GET /v1/sessions/{id} only): POST …/plans/{toolUseId}"),
  })
  .openapi('Session');

export const messageSchema = z
  .object({
    seq: z.number().int(),
    id: z.string(),
    turnId: z.string(),
    kind: z.string().describe('`prompt`, `assistant`, `tool_result`, `compact_boundary`, `compact_summary`, …'),
    role: z.enum(['user', 'assistant']),
    content: z.array(z.looseObject({ type: z.string() })),
    createdAt: z.string(),
    stopReason: z.string().nullable().optional(),
    usage: usageSchema.describe('This one model call (the turn total is on the turn_end event)').optional(),
  })
  .openapi('Message');

/** One page of a message log (a session's or a sub-agent's). */
export const messagePageSchema = z.object({ messages: z.array(messageSchema), nextCursor: nextCursorSchema });

/** POST …/turns (and the last permission answer) without `Accept: text/event-stream`. */
export const turnResultSchema = z
  .object({
    sessionId: z.string(),
    turnId: z.string(),
    stopReason: turnStopReasonSchema.describe('`checkpoint` with status 202 when the turn continues elsewhere: follow `eventsUrl`'),
    usage: usageSchema.nullable(),
    error: z.string().nullable(),
    eventsUrl: z.string(),
    events: z.array(z.unknown()).describe('The TurnEvent objects, without text_delta'),
  })
  .openapi('TurnResult');

export const denialListSchema = z.array(denialSchema);
