import { z } from '@hono/zod-openapi';
import { usageSchema } from './common.ts';
import { turnStopReasonSchema } from './turn-events.ts';

const turnSummarySchema = z
  .object({ turnId: z.string(), stopReason: z.string(), startedAt: z.string(), endedAt: z.string(), error: z.string().optional() })
  .openapi('TurnSummary');

const denialSchema = z.object({ tool: z.string(), count: z.number().int(), suggestion: z.string() });

/** The public shape of a session (functions/sessions/session-view.ts). */
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
    usage: usageSchema.describe("The session's total over all turns"),
    currentTurnId: z.string().nullable(),
    lastTurn: turnSummarySchema.nullable(),
    permissions: z.object({
      mode: z.string().nullable(),
      unattended: z.boolean(),
      hooks: z.array(z.object({ event: z.string(), matcher: z.string().nullable(), url: z.string(), failMode: z.string() })),
      denials: z.array(denialSchema),
    }),
    reloadFromSeq: z.number().int().nullable(),
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
