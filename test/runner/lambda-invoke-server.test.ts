import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SYNC_PAYLOAD_BYTES, startLambdaInvokeServer } from '../../local/lambda-invoke-server.ts';

describe('local Lambda Invoke server', () => {
  let server: Awaited<ReturnType<typeof startLambdaInvokeServer>>;
  let lambda: LambdaClient;
  beforeAll(async () => {
    server = await startLambdaInvokeServer({
      functions: {
        echo: async (event) => event,
        big: async () => ({ blob: 'x'.repeat(MAX_SYNC_PAYLOAD_BYTES) }),
      },
    });
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: server.url, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("enforces Lambda's 6 MB payload limits as AWS does", async () => {
    const ok = await lambda.send(new InvokeCommand({ FunctionName: 'echo', Payload: Buffer.from('{"a":1}') }));
    expect(Buffer.from(ok.Payload!).toString()).toBe('{"a":1}');

    const big = await lambda.send(new InvokeCommand({ FunctionName: 'big', Payload: Buffer.from('{}') }));
    expect(big.FunctionError).toBe('Unhandled');
    expect(JSON.parse(Buffer.from(big.Payload!).toString()).errorType).toBe('Function.ResponseSizeTooLarge');

    const tooLarge = lambda.send(new InvokeCommand({ FunctionName: 'echo', Payload: Buffer.from(JSON.stringify({ s: 'y'.repeat(MAX_SYNC_PAYLOAD_BYTES) })) }));
    await expect(tooLarge).rejects.toMatchObject({ name: 'RequestTooLargeException' });
  });
});
