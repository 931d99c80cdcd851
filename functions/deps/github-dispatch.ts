import type { LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { githubLookupAnswerSchema, githubLookupSchema, type GithubLookup, type GithubLookupAnswer } from '../github-api/github-lookup.ts';
import { githubTriggerSchema } from '../github-api/github-trigger.ts';
import { SystemError } from '../shared/errors.ts';
import type { LazyClient } from '../shared/lazy-client.ts';

/** What the webhook route hands the GitHub worker: one accepted trigger. */
export const githubWorkEventSchema = z.object({ kind: z.literal('github_work'), trigger: githubTriggerSchema });
export type GithubWorkEvent = z.infer<typeof githubWorkEventSchema>;

/** What the API asks the GitHub worker synchronously: a lookup only the App's key can answer. */
export const githubLookupEventSchema = z.object({ kind: z.literal('github_lookup'), query: githubLookupSchema });

export interface GithubDispatcher {
  dispatch(event: GithubWorkEvent): Promise<void>;
  /** Asks GitHub, through the worker (the one function holding the App's private key). */
  lookup(query: GithubLookup): Promise<GithubLookupAnswer>;
}

/**
 * Hands a trigger to the worker with an asynchronous (Event) Lambda invoke, so the webhook is
 * answered at once and the run has the worker's own timeout; a lookup is a synchronous
 * (RequestResponse) invoke. Locally the same invokes reach the in-process worker through the
 * local Lambda Invoke server.
 */
export function createLambdaGithubDispatcher(lambda: LazyClient<LambdaClient>, functionName: string): GithubDispatcher {
  return {
    async dispatch(event) {
      const { InvokeCommand } = await import('@aws-sdk/client-lambda');
      await (await lambda()).send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }));
    },
    async lookup(query) {
      const { InvokeCommand } = await import('@aws-sdk/client-lambda');
      const out = await (await lambda()).send(
        new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify({ kind: 'github_lookup', query })) }),
      );
      const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
      if (out.FunctionError) throw new SystemError(`The GitHub worker could not ask GitHub: ${text.slice(0, 500)}`);
      const answer = githubLookupAnswerSchema.safeParse(JSON.parse(text || 'null'));
      if (!answer.success) throw new SystemError(`The GitHub worker answered a lookup with something else: ${text.slice(0, 200)}`);
      return answer.data;
    },
  };
}
