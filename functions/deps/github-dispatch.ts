import type { LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { githubTriggerSchema } from '../github-api/github-trigger.ts';
import type { LazyClient } from '../shared/lazy-client.ts';

/** What the webhook route hands the GitHub worker: one accepted trigger. */
export const githubWorkEventSchema = z.object({ kind: z.literal('github_work'), trigger: githubTriggerSchema });
export type GithubWorkEvent = z.infer<typeof githubWorkEventSchema>;

export interface GithubDispatcher {
  dispatch(event: GithubWorkEvent): Promise<void>;
}

/**
 * Hands a trigger to the worker with an asynchronous (Event) Lambda invoke, so the webhook is
 * answered at once and the run has the worker's own timeout. Locally the same invoke reaches the
 * in-process worker through the local Lambda Invoke server.
 */
export function createLambdaGithubDispatcher(lambda: LazyClient<LambdaClient>, functionName: string): GithubDispatcher {
  return {
    async dispatch(event) {
      const { InvokeCommand } = await import('@aws-sdk/client-lambda');
      await (await lambda()).send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }));
    },
  };
}
