import { SETUP_SOURCES } from '../../stores/setup-record.ts';
import { z } from '@hono/zod-openapi';
import { askedQuestionSchema, todoItemSchema, usageSchema } from './common.ts';

/**
 * What a turn's event log holds and its SSE stream sends (functions/stores/turn-event.ts): each
 * SSE message has `event: <type>`, `id: <the event's number in its turn>` and `data:` one of
 * these objects as JSON. The schemas document the wire format; the engine's TypeScript types
 * are the source of the values.
 */
const block = z.looseObject({ type: z.string() }).describe('A Messages API content block (text, tool_use, thinking, …)');

const stopReasons = [
  'end_turn',
  'max_turns',
  'max_tokens',
  'stop_sequence',
  'refusal',
  'pause_turn',
  'aborted',
  'model_error',
  'awaiting_permission',
  'hook_stopped',
  'checkpoint',
  'interrupted',
  'budget_exceeded',
  'internal_error',
  'crashed',
] as const;

export const turnStopReasonSchema = z
  .enum(stopReasons)
  .describe(
    "`end_turn`: the model finished. `awaiting_permission`: a call waits for an answer (POST …/permissions/:toolUseId resumes it). `checkpoint`: the turn continues in another invocation. `interrupted`: POST …/interrupt stopped it. `budget_exceeded`: a budget ran out (turn_end's `budget` names it). `crashed`: its process died; everything stored before is kept.",
  );

const events = {
  turn_start: z
    .object({
      type: z.literal('turn_start'),
      sessionId: z.string(),
      turnId: z.string(),
      workspaceVersion: z.number().int().optional().describe('The workspace version the turn starts from'),
    })
    .describe('The first event of every turn'),
  text_delta: z.object({ type: z.literal('text_delta'), text: z.string() }).describe('Streamed assistant text, as it arrives'),
  assistant_message: z
    .object({
      type: z.literal('assistant_message'),
      seq: z.number().int(),
      content: z.array(block),
      stopReason: z.string().nullable(),
      usage: usageSchema.describe("The turn's running total so far (per-message usage is on GET …/messages)"),
    })
    .describe('One complete model response, stored at `seq` in the message log'),
  tool_use: z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }).describe('A tool call is about to run'),
  tool_progress: z
    .object({ type: z.literal('tool_progress'), toolUseId: z.string(), toolName: z.string(), progress: z.unknown() })
    .describe('Output of a running tool so far'),
  tool_result: z
    .object({
      type: z.literal('tool_result'),
      seq: z.number().int(),
      toolUseId: z.string(),
      toolName: z.string(),
      isError: z.boolean(),
      content: z.union([z.string(), z.array(block)]).optional(),
    })
    .describe("A tool call's result, stored at `seq`"),
  turn_continued: z
    .object({ type: z.literal('turn_continued'), turnId: z.string(), eventsUrl: z.string() })
    .describe('This invocation neared its deadline; the turn goes on in another. Follow `eventsUrl` with `Last-Event-ID`'),
  permission_request: z
    .object({ type: z.literal('permission_request'), toolUseId: z.string(), toolName: z.string(), input: z.unknown(), message: z.string() })
    .describe('A call waits for an answer: POST /v1/sessions/{id}/permissions/{toolUseId}'),
  question: z
    .object({ type: z.literal('question'), toolUseId: z.string(), questions: z.array(askedQuestionSchema), expiresAt: z.string() })
    .describe(
      'The agent asks a person (AskUserQuestion) and the turn pauses: POST /v1/sessions/{id}/questions/{toolUseId}/answer; at `expiresAt` it goes on without an answer',
    ),
  plan: z
    .object({ type: z.literal('plan'), toolUseId: z.string(), plan: z.string().describe('The plan, in Markdown') })
    .describe('The agent presents its plan (ExitPlanMode) and the turn pauses until a person approves or rejects it: POST /v1/sessions/{id}/plans/{toolUseId}'),
  todos: z
    .object({ type: z.literal('todos'), todos: z.array(todoItemSchema) })
    .describe('The agent rewrote its task list (TodoWrite): the whole list, as the session now shows it'),
  permission_denied: z
    .object({ type: z.literal('permission_denied'), toolUseId: z.string(), toolName: z.string(), count: z.number().int(), suggestion: z.string().optional() })
    .describe('A call was refused'),
  notice: z
    .object({ type: z.literal('notice'), source: z.string().describe('Where it comes from, e.g. `.claude/settings.json`'), message: z.string() })
    .describe(
      "Something the person running the session should know, e.g. a part of the repository's `.claude/settings.json` that was refused or could not be read",
    ),
  tombstone: z
    .object({ type: z.literal('tombstone'), seq: z.number().int(), error: z.string() })
    .describe('Text streamed since the last assistant_message was discarded (a broken stream); a retry follows'),
  model_retry: z
    .object({ type: z.literal('model_retry'), attempt: z.number().int(), delayMs: z.number(), status: z.number().int().optional(), error: z.string() })
    .describe('A model call failed and is retried after `delayMs`'),
  model_fallback: z
    .object({ type: z.literal('model_fallback'), from: z.string(), to: z.string() })
    .describe('The primary model stayed overloaded: the rest of the calls go to `to`'),
  setup_start: z
    .object({
      type: z.literal('setup_start'),
      source: z.enum(SETUP_SOURCES),
      command: z.string(),
      allowedDomains: z.array(z.string()),
      timeoutSeconds: z.number().int(),
    })
    .describe("The session's set-up steps start, before the first model call of its first turn (docs/environments.md)"),
  setup_end: z
    .object({
      type: z.literal('setup_end'),
      status: z.enum(['running', 'succeeded', 'failed', 'interrupted']),
      exitCode: z.number().int().nullable(),
      timedOut: z.boolean(),
      durationMs: z.number(),
      outputTail: z.string(),
      error: z.string().optional(),
      workspaceVersion: z.number().int().optional().describe("The workspace version the set-up left: the turn's diff starts there"),
    })
    .describe("The set-up steps ended; the session's `setup` holds the same"),
  turn_end: z
    .object({
      type: z.literal('turn_end'),
      turnId: z.string(),
      stopReason: turnStopReasonSchema,
      usage: usageSchema,
      error: z.string().optional(),
      budget: z.string().optional().describe('With `budget_exceeded`: which budget'),
      workspaceVersion: z.number().int().optional().describe('The workspace version the turn leaves (absent when a reader ended a crashed turn)'),
    })
    .describe('The last event of every turn'),
};

/** PascalCase component names: `turn_start` → `TurnStartEvent`. */
const componentName = (type: string) => `${type.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}Event`;

export const TURN_EVENT_TYPES = Object.keys(events) as (keyof typeof events)[];

export const turnEventSchema = z
  .discriminatedUnion(
    'type',
    Object.entries(events).map(([type, schema]) => schema.openapi(componentName(type))) as unknown as [
      typeof events.turn_start,
      ...(typeof events)[keyof typeof events][],
    ],
  )
  .openapi('TurnEvent');

/** How a route describes its SSE body: the event types, and the data schema of each. */
export const SSE_DESCRIPTION = [
  'Server-Sent Events. Each message has `event:` the event type, `id:` its number in the turn (send it back as `Last-Event-ID` to resume) and `data:` the event as JSON (the TurnEvent schema, discriminated by `type`).',
  'A comment line (`: heartbeat`) is sent every 15 s while nothing else is, so proxies keep the connection open.',
  `Event types: ${TURN_EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}.`,
].join('\n\n');

export const sseContent = { 'text/event-stream': { schema: turnEventSchema } } as const;
