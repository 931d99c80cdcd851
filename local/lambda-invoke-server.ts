import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './net/listen.ts';
import type { EmbeddedServer } from './service-child.ts';
import type { TenantIsolatedFunction } from './tenant-worker-pool.ts';

export type LocalFunction = (event: unknown) => Promise<unknown>;

/** What the server reports of each asynchronous invocation it runs: its start, and its failure or end. */
export interface AsyncInvocationWatch {
  begin(name: string, event: unknown): { failed(err: unknown): void; done(): void };
}

/** The header the SDK sends an Invoke's `TenantId` in (@aws-sdk/client-lambda's serializer). */
const TENANT_HEADER = 'x-amz-tenant-id';
/** Lambda's constraint on a tenant id (API reference, Invoke): 1–256 of these characters. */
const TENANT_ID = /^[a-zA-Z0-9._:/=+\-@ ]{1,256}$/;

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** Lambda's cap on a synchronous invocation's request and response payloads (6 MB). */
export const MAX_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * Serves functions over the Lambda Invoke API so the harness calls them with the real
 * @aws-sdk/client-lambda, exactly as in AWS: RequestResponse (200 + payload), Event (202, run
 * in the background), DryRun (204), a handler error as 200 + `X-Amz-Function-Error: Unhandled`,
 * an unknown function as 404 ResourceNotFoundException, and Lambda's 6 MB payload cap (a larger
 * request is 413 RequestTooLargeException; a larger response, a Function.ResponseSizeTooLarge
 * function error), so what works locally also fits in AWS.
 *
 * Tenant isolation as in AWS: a function registered as a TenantIsolatedFunction (one process per
 * tenant id, tenant-worker-pool.ts) gets the invoke's `X-Amz-Tenant-Id`; invoking it without one,
 * or invoking any other function with one, is refused with InvalidParameterValueException, as
 * Lambda refuses both.
 *
 * An asynchronous (Event) invocation is watched from start to end (`watch`): one that throws is
 * not retried (the deployed functions set no retries) and is reported failed with its event, as
 * Lambda sends it to the functions' on-failure destination.
 */
export async function startLambdaInvokeServer(opts: {
  functions: Record<string, LocalFunction | TenantIsolatedFunction>;
  port?: number;
  watch?: AsyncInvocationWatch;
}): Promise<EmbeddedServer & { pending(): Promise<void> }> {
  const background = new Set<Promise<unknown>>();
  const inBackground = (inv: Invocation) => {
    const watched = opts.watch?.begin(inv.name, inv.event);
    const job = inv.run().then(
      () => watched?.done(),
      (err: unknown) => watched?.failed(err),
    );
    background.add(job);
    void job.finally(() => background.delete(job));
  };
  const server = createServer(async (req, res) => {
    const invocation = await readInvocation(req, opts.functions);
    send(res, 'run' in invocation ? await answer(invocation, inBackground) : invocation);
  });
  const url = await listenOnLoopback(server, opts.port);
  return {
    url,
    close: () => closeServer(server),
    pending: async () => {
      await Promise.all([...background]);
    },
  };
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

interface Invocation {
  name: string;
  type: string;
  event: unknown;
  run(): Promise<unknown>;
}

const refuse = (status: number, errorType: string, body: unknown): Reply => ({ status, headers: { 'x-amzn-errortype': errorType }, body });

/** Decodes an Invoke request, or the error reply Lambda gives for it, checked in Lambda's order. */
async function readInvocation(req: IncomingMessage, functions: Record<string, LocalFunction | TenantIsolatedFunction>): Promise<Invocation | Reply> {
  const match = req.method === 'POST' ? INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://local').pathname) : null;
  if (!match) return refuse(404, 'UnknownOperationException', { message: 'Unknown operation' });
  const name = decodeURIComponent(match[1]!).split(':').pop()!;
  const fn = functions[name];
  const body = await readBody(req);
  if (!fn) return refuse(404, 'ResourceNotFoundException', { Type: 'User', message: `Function not found: ${name}` });
  let event: unknown;
  try {
    event = body.length ? JSON.parse(body.toString('utf8')) : {};
  } catch {
    return refuse(400, 'InvalidRequestContentException', { message: 'Could not parse request body into json' });
  }
  const tenantId = req.headers[TENANT_HEADER];
  const isolated = typeof fn !== 'function';
  const tenantRefusal = checkTenant(name, isolated, tenantId);
  if (tenantRefusal) return tenantRefusal;
  const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
  if (type !== 'Event' && body.length > MAX_SYNC_PAYLOAD_BYTES) {
    return refuse(413, 'RequestTooLargeException', {
      Type: 'User',
      message: `${body.length} byte payload is too large for the RequestResponse invocation type (${MAX_SYNC_PAYLOAD_BYTES} byte limit)`,
    });
  }
  return { name, type, event, run: isolated ? () => fn.invoke(tenantId as string, event) : () => fn(event) };
}

function checkTenant(name: string, isolated: boolean, tenantId: string | string[] | undefined): Reply | undefined {
  if (typeof tenantId === 'string' && !TENANT_ID.test(tenantId)) {
    return refuse(400, 'InvalidParameterValueException', {
      Type: 'User',
      message: 'The tenant id must be 1-256 characters of letters, digits, spaces and ._:/=+-@',
    });
  }
  if (isolated === (tenantId !== undefined)) return undefined;
  return refuse(400, 'InvalidParameterValueException', {
    Type: 'User',
    message: isolated
      ? `Function ${name} uses tenant isolation mode: the invocation needs a tenant id.`
      : `Function ${name} does not use tenant isolation mode: the invocation must not carry a tenant id.`,
  });
}

/** Runs the invocation as its type asks: DryRun (204), Event (202, in the background) or synchronously. */
async function answer(inv: Invocation, inBackground: (inv: Invocation) => void): Promise<Reply> {
  if (inv.type === 'DryRun') return { status: 204, headers: {}, body: undefined };
  if (inv.type === 'Event') {
    inBackground(inv);
    return { status: 202, headers: {}, body: undefined };
  }
  try {
    const result = await inv.run();
    const size = Buffer.byteLength(JSON.stringify(result ?? null));
    if (size <= MAX_SYNC_PAYLOAD_BYTES) return { status: 200, headers: { 'x-amz-executed-version': '$LATEST' }, body: result ?? null };
    return functionError({
      errorType: 'Function.ResponseSizeTooLarge',
      errorMessage: `Response payload size (${size} bytes) exceeded maximum allowed payload size (${MAX_SYNC_PAYLOAD_BYTES} bytes).`,
    });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    return functionError({ errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') });
  }
}

const functionError = (body: unknown): Reply => ({ status: 200, headers: { 'x-amz-function-error': 'Unhandled' }, body });

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, { status, headers, body }: Reply): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}
