import { z } from 'zod';

/**
 * The record Lambda sends an on-failure destination for an asynchronous invocation that failed
 * (Lambda developer guide, "Capturing records of Lambda asynchronous invocations"): what was
 * invoked, the event as sent (`requestPayload`, what a redrive sends again) and the error.
 */
export const asyncFailureRecordSchema = z.object({
  version: z.string(),
  timestamp: z.string(),
  requestContext: z.object({ requestId: z.string(), functionArn: z.string(), condition: z.string(), approximateInvokeCount: z.number() }),
  requestPayload: z.unknown().optional(),
  responseContext: z.object({ statusCode: z.number(), executedVersion: z.string().optional(), functionError: z.string().optional() }).optional(),
  responsePayload: z.unknown().optional(),
});
export type AsyncFailureRecord = z.infer<typeof asyncFailureRecordSchema>;

/** One failed asynchronous invocation, as the admin API shows it. */
export interface FailedInvocation {
  /** The failed invocation's request id (Lambda's), unique per failure. */
  id: string;
  /** The function that was invoked, without a qualifier. */
  functionName: string;
  failedAt: string;
  /** The event as it was sent; absent when Lambda left it out of the record (too large for the queue). */
  event?: unknown;
  error: { type: string; message: string };
}

/** A failure read from the store and held from other readers until removed, released or the hold expires. */
export interface HeldFailure extends FailedInvocation {
  /** What `remove` and `release` take: SQS's receipt handle, the id locally. */
  receipt: string;
}

/**
 * Where failed asynchronous invocations wait to be looked at and sent again: the
 * `{prefix}-async-failures` SQS queue in AWS (sqs-failed-invocations.ts), a file of the data
 * folder locally (local/async-failure-store.ts). Reading is SQS's: a batch at a time, each
 * record held (invisible to other reads) for `holdSeconds`, in no promised order.
 */
export interface FailedInvocationStore {
  /** Up to 10 records not held by another read, each held for `holdSeconds`. */
  receive(max: number, holdSeconds: number): Promise<HeldFailure[]>;
  /** Deletes a held record: its work was sent again and accepted. */
  remove(receipt: string): Promise<void>;
  /** Makes held records visible again at once. */
  release(receipts: readonly string[]): Promise<void>;
}

/** A destination record as the admin API shows it. */
export function failedInvocationOf(record: AsyncFailureRecord): FailedInvocation {
  const response = z.object({ errorType: z.string().optional(), errorMessage: z.string().optional() }).safeParse(record.responsePayload);
  const error = response.success ? response.data : {};
  return {
    id: record.requestContext.requestId,
    // arn:aws:lambda:region:account:function:name[:qualifier]
    functionName: record.requestContext.functionArn.split(':')[6] ?? record.requestContext.functionArn,
    failedAt: record.timestamp,
    ...(record.requestPayload === undefined ? {} : { event: record.requestPayload }),
    error: {
      type: error.errorType ?? record.requestContext.condition,
      message: error.errorMessage ?? JSON.stringify(record.responsePayload ?? null).slice(0, 1000),
    },
  };
}
