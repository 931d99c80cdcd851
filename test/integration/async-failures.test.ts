import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTION, type LocalStack } from '../../local/stack.ts';
import type { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

/** A failed asynchronous invocation is kept (the local async-failures queue) and can be sent again. */
describe('failed asynchronous work on the local stack', () => {
  const fx = useLocalStack({});
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  let lambda: LambdaClient;
  beforeAll(() => {
    ({ stack, api } = fx);
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: stack.urls.lambda, credentials: stack.deps.config.localCredentials! });
  });
  afterAll(() => lambda?.destroy());

  const sendEvent = (payload: unknown) =>
    lambda.send(new InvokeCommand({ FunctionName: API_FUNCTION, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(payload)) }));

  it('lists an async invocation that threw, with its event and error, and completes the work when that event is sent again', async () => {
    const sessionId = await api.createSession({ 'a.txt': 'a\n' });
    const event = { kind: 'purge_session', sessionId };
    // The purge refuses a session that is not deleted: the invocation throws.
    expect((await sendEvent(event)).StatusCode).toBe(202);
    const [failure] = await until(
      async () => stack.asyncFailures().filter((f) => JSON.stringify(f.requestPayload) === JSON.stringify(event)),
      (found) => found.length > 0,
    );
    expect(failure).toMatchObject({
      requestContext: { functionArn: expect.stringMatching(/:function:stratus-api$/), condition: 'RetriesExhausted' },
      requestPayload: event,
      responsePayload: { errorMessage: expect.stringContaining('it is not deleted') },
    });
    expect(await stack.deps.sessions.get(sessionId)).toBeDefined();

    // Once the session is deleted, the same event sent again (a redrive) purges it.
    await stack.deps.sessions.markDeleted(sessionId, Date.now());
    expect((await sendEvent(failure!.requestPayload)).StatusCode).toBe(202);
    await until(
      () => stack.deps.sessions.get(sessionId),
      (s) => s === undefined,
    );
    expect(await stack.deps.messages.loadFrom(sessionId)).toEqual([]);
    expect(stack.asyncFailures().filter((f) => JSON.stringify(f.requestPayload) === JSON.stringify(event))).toHaveLength(1);
  });

  it('lists an event no handler understands instead of dropping it', async () => {
    const event = { kind: 'not_a_kind', sessionId: 'ses_x' };
    await sendEvent(event);
    const found = await until(
      async () => stack.asyncFailures().filter((f) => JSON.stringify(f.requestPayload) === JSON.stringify(event)),
      (f) => f.length > 0,
    );
    expect(found[0]!.responsePayload.errorMessage).toBeTruthy();
  });
});
