import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * The record Lambda sends an on-failure destination for an asynchronous invocation that failed
 * (Lambda developer guide, "Capturing records of Lambda asynchronous invocations"): what was
 * invoked, the event as sent (`requestPayload`, what a redrive sends again) and the error.
 */
export interface AsyncFailureRecord {
  version: '1.0';
  timestamp: string;
  requestContext: { requestId: string; functionArn: string; condition: 'RetriesExhausted'; approximateInvokeCount: number };
  requestPayload: unknown;
  responseContext: { statusCode: 200; executedVersion: '$LATEST'; functionError: 'Unhandled' };
  responsePayload: { errorType: string; errorMessage: string };
}

/**
 * The local stand-in for the `{prefix}-async-failures` queue (infra/constructs/async-failures.ts):
 * the records of failed asynchronous invocations, one JSON line each in a file of the data folder,
 * so they outlast a restart as the queue's messages outlast a deploy.
 */
export function createAsyncFailureStore(file: string, functionArn: (name: string) => string) {
  return {
    add(name: string, err: unknown, event: unknown): AsyncFailureRecord {
      const e = err instanceof Error ? err : new Error(String(err));
      const record: AsyncFailureRecord = {
        version: '1.0',
        timestamp: new Date().toISOString(),
        requestContext: { requestId: crypto.randomUUID(), functionArn: functionArn(name), condition: 'RetriesExhausted', approximateInvokeCount: 1 },
        requestPayload: event,
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
        responsePayload: { errorType: e.name, errorMessage: e.message },
      };
      appendFileSync(file, `${JSON.stringify(record)}\n`);
      return record;
    },
    list(): AsyncFailureRecord[] {
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AsyncFailureRecord);
    },
  };
}
