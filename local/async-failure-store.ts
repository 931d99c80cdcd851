import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { failedInvocationOf, type AsyncFailureRecord, type FailedInvocationStore, type HeldFailure } from '../functions/stores/failed-invocations.ts';
import type { AsyncInvocationWatch } from './lambda-invoke-server.ts';

/**
 * The local stand-in for the `{prefix}-async-failures` queue (infra/constructs/async-failures.ts):
 * the records of failed asynchronous invocations, one JSON line each in `failures.jsonl` of its
 * folder, so they outlast a restart as the queue's messages outlast a deploy. Reads hold records
 * as SQS's visibility timeout does (in this process's memory).
 *
 * An invocation whose process is killed is a failure too, as Lambda records a runtime that exits
 * mid-invocation: each running invocation has a file in `running/` until it ends, and the next
 * start turns what a killed process left there into failure records (`recoverInterrupted`).
 */
export function createAsyncFailureStore(dir: string, functionArn: (name: string) => string) {
  const file = path.join(dir, 'failures.jsonl');
  const running = path.join(dir, 'running');
  mkdirSync(running, { recursive: true });
  const add = (name: string, err: unknown, event: unknown, requestId: string = crypto.randomUUID()) => {
    const record = failureRecord(functionArn(name), requestId, err, event);
    appendFileSync(file, `${JSON.stringify(record)}\n`);
    return record;
  };
  const list = (): AsyncFailureRecord[] =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as AsyncFailureRecord)
      : [];
  const watch: AsyncInvocationWatch = {
    begin(name, event) {
      const requestId = crypto.randomUUID();
      const marker = path.join(running, `${requestId}.json`);
      writeFileSync(marker, JSON.stringify({ name, event }));
      const end = () => rmSync(marker, { force: true });
      return { failed: (err) => (add(name, err, event, requestId), end()), done: end };
    },
  };
  /** Invocations a killed process left running: failed, as Lambda reports a runtime that exited. */
  const recoverInterrupted = () => {
    for (const entry of readdirSync(running)) {
      const { name, event } = JSON.parse(readFileSync(path.join(running, entry), 'utf8')) as { name: string; event: unknown };
      const requestId = entry.replace(/\.json$/, '');
      add(name, runtimeExited(requestId), event, requestId);
      rmSync(path.join(running, entry));
    }
  };
  return { add, list, watch, recoverInterrupted, store: heldReads(file, list) };
}

function failureRecord(functionArn: string, requestId: string, err: unknown, event: unknown): AsyncFailureRecord {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    version: '1.0',
    timestamp: new Date().toISOString(),
    requestContext: { requestId, functionArn, condition: 'RetriesExhausted', approximateInvokeCount: 1 },
    requestPayload: event,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: { errorType: e.name, errorMessage: e.message },
  };
}

/** Lambda's error for an invocation whose runtime process died. */
function runtimeExited(requestId: string): Error {
  const err = new Error(`RequestId: ${requestId} Error: Runtime exited with error: signal: killed`);
  err.name = 'Runtime.ExitError';
  return err;
}

/** The FailedInvocationStore over the file: receive holds records for a while, remove rewrites the file without one. */
function heldReads(file: string, list: () => AsyncFailureRecord[]): FailedInvocationStore {
  const heldUntil = new Map<string, number>();
  return {
    async receive(max, holdSeconds) {
      const now = Date.now();
      const visible = list().filter((r) => (heldUntil.get(r.requestContext.requestId) ?? 0) <= now);
      const batch = visible.slice(0, Math.min(max, 10));
      for (const r of batch) heldUntil.set(r.requestContext.requestId, now + holdSeconds * 1000);
      return batch.map((r): HeldFailure => ({ ...failedInvocationOf(r), receipt: r.requestContext.requestId }));
    },
    async remove(receipt) {
      const kept = list().filter((r) => r.requestContext.requestId !== receipt);
      writeFileSync(file, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
      heldUntil.delete(receipt);
    },
    async release(receipts) {
      for (const receipt of receipts) heldUntil.delete(receipt);
    },
  };
}
