import type { AwsJsonCall } from '../shared/aws-json-call.ts';
import { asyncFailureRecordSchema, failedInvocationOf, type FailedInvocationStore, type HeldFailure } from './failed-invocations.ts';

interface SqsMessage {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
}

/**
 * The failed invocations in AWS: the `{prefix}-async-failures` queue Lambda sends them to (its
 * on-failure destination), read with ReceiveMessage (a batch, each message invisible for the
 * hold), deleted with DeleteMessage, released with ChangeMessageVisibility to 0. A message that
 * is not a destination record (sent by hand) is shown with its body as the error, never redriven.
 */
export function createSqsFailedInvocations(call: AwsJsonCall, queueUrl: string): FailedInvocationStore {
  return {
    async receive(max, holdSeconds) {
      const out = await call('AmazonSQS.ReceiveMessage', {
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(max, 10),
        VisibilityTimeout: holdSeconds,
        WaitTimeSeconds: 0,
      });
      return ((out.Messages ?? []) as SqsMessage[]).map(heldFailureOf);
    },
    async remove(receipt) {
      await call('AmazonSQS.DeleteMessage', { QueueUrl: queueUrl, ReceiptHandle: receipt });
    },
    async release(receipts) {
      for (let i = 0; i < receipts.length; i += 10) {
        const entries = receipts.slice(i, i + 10).map((ReceiptHandle, n) => ({ Id: String(n), ReceiptHandle, VisibilityTimeout: 0 }));
        await call('AmazonSQS.ChangeMessageVisibilityBatch', { QueueUrl: queueUrl, Entries: entries });
      }
    },
  };
}

function heldFailureOf(message: SqsMessage): HeldFailure {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.Body);
  } catch {
    parsed = undefined;
  }
  const record = asyncFailureRecordSchema.safeParse(parsed);
  if (record.success) return { ...failedInvocationOf(record.data), receipt: message.ReceiptHandle };
  return {
    id: message.MessageId,
    functionName: '(unknown)',
    failedAt: new Date(0).toISOString(),
    error: { type: 'NotADestinationRecord', message: message.Body.slice(0, 1000) },
    receipt: message.ReceiptHandle,
  };
}
