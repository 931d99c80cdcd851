import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { continueTurnEventSchema, type ContinueTurnEvent } from './continue-turn.ts';

/**
 * Asks for a fresh invocation of the API function to carry a checkpointed turn on
 * (InvocationType "Event": Lambda queues it and answers 202 at once, so the current
 * invocation can end before its deadline). In AWS `functionName` is the API function's own
 * name (AWS_LAMBDA_FUNCTION_NAME); its role may invoke itself and nothing else of the kind.
 */
export async function requestContinuation(lambda: LambdaClient, functionName: string, event: ContinueTurnEvent): Promise<void> {
  const payload = continueTurnEventSchema.parse(event);
  const out = await lambda.send(
    new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(payload)) }),
  );
  if (out.StatusCode !== 202) throw new Error(`Continuation of turn ${payload.turnId} was not queued (status ${out.StatusCode}).`);
}
