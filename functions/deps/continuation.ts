import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { LazyClient } from '../shared/lazy-client.ts';
import { z } from 'zod';
import { turnSettingsSchema } from '../session-settings/session-settings.ts';

/**
 * A turn that nears its invocation's deadline checkpoints (everything is already in DynamoDB)
 * and asks for a fresh invocation to carry on. This is that request: the API function invokes
 * itself asynchronously with it.
 */
export const continueTurnEventSchema = z.object({
  kind: z.literal('continue_turn'),
  sessionId: z.string(),
  turnId: z.string(),
  /** The lease owner the previous invocation handed the session to. */
  handoffOwner: z.string(),
  /** Event numbering goes on from here, so followers see one unbroken stream. */
  nextEventSeq: z.number().int().nonnegative(),
  /** Model calls already made by this turn (the max-calls bound spans invocations). */
  modelCalls: z.number().int().nonnegative(),
  startedAt: z.number(),
  /** The turn's own permission mode and request rules, which last for the whole turn. */
  settings: turnSettingsSchema.optional(),
  /**
   * Present when the turn has not started yet (`Prefer: respond-async`): the request that took
   * the lease answered 202 at once and this invocation runs the whole turn, prompt first.
   */
  start: z.object({ prompt: z.string() }).optional(),
});

export type ContinueTurnEvent = z.infer<typeof continueTurnEventSchema>;

/** Removes a deleted session's data (DELETE /v1/sessions/:id answers before it is done). */
export const purgeSessionEventSchema = z.object({ kind: z.literal('purge_session'), sessionId: z.string() });

/**
 * Runs (or picks up again) a background sub-agent: a turn of its own, under its own lease, in
 * its own invocation. `agentLogId` names its log and record (`{sessionId}/agents/{agentId}`).
 */
export const runSubagentEventSchema = z.object({ kind: z.literal('run_subagent'), sessionId: z.string(), agentLogId: z.string() });

export type RunSubagentEvent = z.infer<typeof runSubagentEventSchema>;

/** Everything the API function is asked to do asynchronously. */
export const asyncEventSchema = z.discriminatedUnion('kind', [continueTurnEventSchema, purgeSessionEventSchema, runSubagentEventSchema]);

export type AsyncEvent = z.infer<typeof asyncEventSchema>;

export interface ContinuationScheduler {
  schedule(event: AsyncEvent): Promise<void>;
}

/** Schedules continuations with an asynchronous (Event) Lambda invoke of the API function. */
export function createLambdaContinuationScheduler(lambda: LazyClient<LambdaClient>, functionName: string): ContinuationScheduler {
  return {
    async schedule(event) {
      const { InvokeCommand } = await import('@aws-sdk/client-lambda');
      await (await lambda()).send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }));
    },
  };
}
