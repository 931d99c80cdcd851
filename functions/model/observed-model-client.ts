import type { Metrics } from '../shared/metrics.ts';
import type { Tracing } from '../shared/tracing.ts';
import type { ModelClient } from './model-client.ts';

/**
 * The model client with every call observed, whichever provider is behind it: an X-Ray
 * subsegment `model` from the request to the stream's last event (annotated with the model),
 * and the metrics ModelCallDuration, ModelTimeToFirstEvent and ModelCallErrors.
 */
export function observeModelClient(client: ModelClient, obs: { tracing: Tracing; metrics: Metrics; clock: () => number }): ModelClient {
  const { messages } = client;
  const create = (body: { model: string }, options?: unknown): Promise<unknown> => {
    const span = obs.tracing.startSpan('model');
    span.annotate('model', body.model);
    const startedAt = obs.clock();
    let settled = false;
    const settle = (error: unknown, firstEventAt: number | undefined) => {
      if (settled) return;
      settled = true;
      span.end(error);
      obs.metrics.emit(
        {
          ModelCallDuration: { value: obs.clock() - startedAt, unit: 'Milliseconds' },
          ...(firstEventAt !== undefined ? { ModelTimeToFirstEvent: { value: firstEventAt - startedAt, unit: 'Milliseconds' } } : {}),
          ModelCallErrors: { value: error === undefined ? 0 : 1, unit: 'Count' },
        },
        { metadata: { model: body.model } },
      );
    };
    const call = (messages.create as (b: unknown, o?: unknown) => Promise<unknown>).call(messages, body, options);
    return call.then(
      (result) => (isAsyncIterable(result) ? observed(result, obs.clock, settle) : (settle(undefined, undefined), result)),
      (err: unknown) => {
        settle(err, undefined);
        throw err;
      },
    );
  };
  return {
    messages: {
      // A plain promise, not the SDK's APIPromise: the harness only awaits it and iterates the stream.
      create: create as unknown as ModelClient['messages']['create'],
      ...(messages.countTokens ? { countTokens: messages.countTokens.bind(messages) } : {}),
    },
  };
}

async function* observed<T>(
  stream: AsyncIterable<T>,
  clock: () => number,
  settle: (error: unknown, firstEventAt: number | undefined) => void,
): AsyncGenerator<T> {
  let firstEventAt: number | undefined;
  let error: unknown;
  try {
    for await (const event of stream) {
      firstEventAt ??= clock();
      yield event;
    }
  } catch (err) {
    error = err;
    throw err;
  } finally {
    // Also when the consumer stops early (an abort): the span and the figures still close.
    settle(error, firstEventAt);
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
