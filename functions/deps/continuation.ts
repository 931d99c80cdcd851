import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { turnSettingsSchema } from '../permissions/session-settings.ts';

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
  /** The turn's own model-call budget, when lower than the configured one. */
  maxModelCalls: z.number().int().positive().optional(),
});

export type ContinueTurnEvent = z.infer<typeof continueTurnEventSchema>;

export interface ContinuationScheduler {
  schedule(event: ContinueTurnEvent): Promise<void>;
}

/** Schedules continuations with an asynchronous (Event) Lambda invoke of the API function. */
export function createLambdaContinuationScheduler(lambda: LambdaClient, functionName: string): ContinuationScheduler {
  return {
    async schedule(event) {
      await lambda.send(
        new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }),
      );
    },
  };
}
