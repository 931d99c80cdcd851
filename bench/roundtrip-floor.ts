import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources/messages';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startLambdaInvokeServer } from '../local/lambda-invoke-server.ts';
import type { MessagesRequest } from '../local/scripted-model/script.ts';
import { LOCAL_BUCKET, type LocalStack } from '../local/stack.ts';
import { startModelProcess } from './model-process-client.ts';
import { createBwrapSandbox } from '../sandbox-runner/isolation/bwrap-sandbox.ts';
import { s3ClientConfig } from '../sandbox-runner/common/s3-client-config.ts';

const SAMPLES = 60;
const WARMUP = 10;

/** Medians (ms) of the parts every tool round trip goes through, each measured alone. */
export interface RoundTripFloor {
  messagePut: number;
  invoke: number;
  modelSend: number;
  /** A create-only PUT of a small object: how a changed workspace's new version becomes durable. */
  versionPut: number;
  sandboxStart: number;
  /** The same `true` handed to a sandbox started ahead (isolation/warm-bwrap.ts), as a session's Bash commands are. */
  sandboxHandover: number;
}

/**
 * The least a tool round trip can cost on this machine with these parts, whatever the harness
 * around them does: each part measured alone, one call at a time, through the real clients the
 * round trip uses — one message put (the tool result must be durable before the next request),
 * one Lambda Invoke of a function that does nothing (in this process: the runner's own process
 * adds an IPC hop on top), one model request from the SDK call to its arrival at the server (the
 * body the bench's last Stratus request carried), a create-only PUT of a small object to the
 * S3 stand-in (a tool that changes the workspace reports its result only once the new version
 * is durable), and for Bash one `true` in the hardened sandbox, started for it and started ahead
 * of it. A round trip needs at least the first three in series; Write and Edit also the PUT, Bash
 * also the sandbox (the one started ahead: the turn's warm op and each command start the next).
 */
export async function measureFloor(stack: LocalStack, lastRequest: MessagesRequest | undefined): Promise<RoundTripFloor> {
  let seq = 0;
  const content = [{ type: 'tool_result' as const, tool_use_id: 'toolu_floor', content: 'x'.repeat(1_500) }];
  const messagePut = await medianOf(() =>
    stack.deps.messages.append({
      sessionId: 'ses_roundtrip_floor',
      seq: seq++,
      uuid: `msg_floor_${seq}`,
      turnId: 'turn_floor',
      kind: 'tool_result',
      role: 'user',
      content,
      createdAt: new Date().toISOString(),
    }),
  );
  return {
    messagePut,
    invoke: await invokeFloor(stack),
    modelSend: await modelSendFloor(lastRequest),
    versionPut: await versionPutFloor(stack),
    ...(await sandboxFloor()),
  };
}

async function versionPutFloor(stack: LocalStack): Promise<number> {
  const s3 = new S3Client(s3ClientConfig({ region: stack.deps.config.region, endpoint: stack.urls.s3 }, stack.deps.config.localCredentials!));
  const body = JSON.stringify({ version: 2, upserts: { 'out/w.txt': { type: 'file', sha256: 'x'.repeat(64), size: 8, mode: 420 } }, padding: 'x'.repeat(400) });
  let n = 0;
  try {
    return await medianOf(() => s3.send(new PutObjectCommand({ Bucket: LOCAL_BUCKET, Key: `roundtrip-floor/${n++}.json`, Body: body, IfNoneMatch: '*' })));
  } finally {
    s3.destroy();
  }
}

async function invokeFloor(stack: LocalStack): Promise<number> {
  const server = await startLambdaInvokeServer({ functions: { noop: async (event) => event } });
  const lambda = new LambdaClient({ region: stack.deps.config.region, endpoint: server.url, credentials: stack.deps.config.localCredentials });
  const payload = Buffer.from(JSON.stringify({ op: { type: 'read', path: '/workspace/src/mod1.ts' }, padding: 'x'.repeat(1_000) }));
  try {
    return await medianOf(() => lambda.send(new InvokeCommand({ FunctionName: 'noop', Payload: payload })));
  } finally {
    lambda.destroy();
    await server.close();
  }
}

async function modelSendFloor(lastRequest: MessagesRequest | undefined): Promise<number> {
  let arrived = 0;
  // The same model process the round trips talk to (model-process.ts).
  const model = await startModelProcess(({ receivedAt }) => void (arrived = receivedAt));
  const client = new Anthropic({ apiKey: 'floor', baseURL: model.url });
  const body = {
    ...(lastRequest ?? { model: 'floor', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
    stream: true,
  } as MessageCreateParamsStreaming;
  try {
    return await medianOf(async () => {
      const sent = performance.now();
      await client.messages.stream(body).finalMessage();
      // A reply follows every exchange reported before it: `arrived` is this request's now.
      await model.enqueue([]);
      return arrived - sent;
    });
  } finally {
    await model.close();
  }
}

async function sandboxFloor(): Promise<Pick<RoundTripFloor, 'sandboxStart' | 'sandboxHandover'>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'stratus-floor-'));
  const workspaceDir = path.join(dir, 'ws');
  const tmpDir = path.join(dir, 'tmp');
  mkdirSync(workspaceDir);
  mkdirSync(tmpDir);
  const sandbox = createBwrapSandbox({ runtimeDir: path.join(dir, 'rt') });
  const run = (warmAhead: boolean) =>
    sandbox.run({
      command: 'true',
      workspaceDir,
      tmpDir,
      cwd: '/workspace',
      env: {},
      timeoutMs: 10_000,
      outputFile: path.join(tmpDir, 'out'),
      maxOutputBytes: 1_000_000,
      warmAhead,
    });
  try {
    const sandboxStart = await medianOf(() => run(false));
    // A round trip leaves the next sandbox tens of ms to start (the harness's writes, the model's answer): here 50.
    const sandboxHandover = await medianOf(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      await run(true);
      return performance.now() - started;
    });
    return { sandboxStart, sandboxHandover };
  } finally {
    await sandbox.discardWarm?.(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Median of SAMPLES timed calls after WARMUP untimed ones; a call returning a number reports its own duration. */
async function medianOf(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const own = await call();
    times.push(typeof own === 'number' ? own : performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}
