import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { RunnerRequest, RunnerResponse, StorageCredentials } from '../../sandbox-runner/protocol.ts';
import { SystemError } from '../shared/errors.ts';

/** The harness's view of the sandbox runner: one request, one response. */
export interface RunnerClient {
  invoke(request: RunnerRequest): Promise<RunnerResponse>;
}

/** Mints the short-lived, workspace-scoped storage credentials sent with each runner call. */
export interface WorkspaceCredentialSource {
  forWorkspace(workspaceId: string): Promise<StorageCredentials>;
}

/** Thrown when the runner itself failed (crashed, timed out, unreachable): an infrastructure error. */
export class RunnerFailedError extends SystemError {
  constructor(message: string) {
    super(message, 'runner_failed');
  }
}

/** Calls the runner through the Lambda Invoke API, locally and in AWS alike. */
export function createLambdaRunnerClient(lambda: LambdaClient, functionName: string): RunnerClient {
  return {
    async invoke(request) {
      const out = await lambda.send(
        new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(request)) }),
      );
      const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
      if (out.FunctionError) {
        let detail = text;
        try {
          const parsed = JSON.parse(text) as { errorType?: string; errorMessage?: string };
          detail = `${parsed.errorType ?? 'Error'}: ${parsed.errorMessage ?? ''}`;
        } catch {
          // keep raw text
        }
        throw new RunnerFailedError(`The sandbox runner failed: ${detail}`);
      }
      try {
        return JSON.parse(text) as RunnerResponse;
      } catch {
        throw new RunnerFailedError(`The sandbox runner returned an unreadable response (${text.length} bytes).`);
      }
    },
  };
}
