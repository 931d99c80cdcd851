import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { LazyClient } from '../shared/lazy-client.ts';

/** Invokes a function asynchronously with an event as it is (a redrive); resolves once Lambda accepted it. */
export type AsyncInvoke = (functionName: string, event: unknown) => Promise<void>;

export function createLambdaAsyncInvoke(lambda: LazyClient<LambdaClient>): AsyncInvoke {
  return async (functionName, event) => {
    const { InvokeCommand } = await import('@aws-sdk/client-lambda');
    const out = await (await lambda()).send(
      new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }),
    );
    if (out.StatusCode !== 202) throw new Error(`Lambda answered ${out.StatusCode} to an asynchronous invocation of ${functionName}`);
  };
}
