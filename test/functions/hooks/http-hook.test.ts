import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback } from '../../../local/net/listen.ts';
import {
  createHttpHook,
  httpHookConfigSchema,
  MAX_HOOK_ANSWER_BYTES,
  SIGNATURE_HEADER,
  signHookRequest,
  TIMESTAMP_HEADER,
} from '../../../functions/hooks/http-hook.ts';
import { createOutboundFetch } from '../../../functions/outbound/outbound-fetch.ts';
import { createOutboundPolicy } from '../../../functions/outbound/outbound-policy.ts';
import { runHooks } from '../../../functions/hooks/run-hooks.ts';
import { runPreToolUseHooks } from '../../../functions/hooks/tool-hooks.ts';
import type { HookDefinition, HookInput } from '../../../functions/hooks/types.ts';
import { memoryLogger } from '../../support/fake-tools.ts';

const SECRET = 'a-shared-secret-of-enough-length';

describe('HTTP hooks', () => {
  let server: Server;
  let url: string;
  const received: { headers: IncomingMessage['headers']; body: string }[] = [];
  const hanging: (() => void)[] = [];

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, body });
      const path = req.url ?? '/';
      if (path === '/deny') return res.end(JSON.stringify({ decision: 'deny', reason: 'rm is not allowed here' }));
      if (path === '/empty') return res.end('');
      if (path === '/nonsense') return res.end(JSON.stringify({ decision: 'maybe' }));
      if (path === '/error') {
        res.writeHead(503);
        return res.end('down');
      }
      if (path === '/hang') return void hanging.push(() => res.end(''));
      res.end(JSON.stringify({ updatedInput: { command: 'ls -la' } }));
    });
    url = await listenOnLoopback(server);
  });
  afterAll(async () => {
    for (const release of hanging) release();
    await closeServer(server);
  });

  const input: HookInput = {
    event: 'PreToolUse',
    sessionId: 's',
    turnId: 't',
    toolName: 'Bash',
    toolUseId: 'toolu_1',
    toolInput: { command: 'rm -rf x' },
    permissionMode: 'default',
  };
  // The operator allows exactly this loopback server (STRATUS_PRIVATE_NETWORK_ALLOW), as a deployment would.
  const policy = () => createOutboundPolicy({ privateNetworkAllow: [new URL(url).host], ownEndpoints: [] });
  const hook = (path: string, extra: Record<string, unknown> = {}) =>
    createHttpHook(httpHookConfigSchema.parse({ event: 'PreToolUse', url: `${url}${path}`, secret: SECRET, ...extra }), {
      fetch: createOutboundFetch(policy(), { maxResponseBytes: MAX_HOOK_ANSWER_BYTES }),
      clock: () => 1_700_000_000_000,
    });

  it('posts the input as JSON, signed with HMAC-SHA256 over timestamp and body', async () => {
    const { log } = memoryLogger();
    const [run] = await runHooks([hook('/update')], input, { signal: new AbortController().signal, log });
    expect(run).toMatchObject({ ok: true, output: { updatedInput: { command: 'ls -la' } } });
    const last = received.at(-1)!;
    expect(JSON.parse(last.body)).toEqual(input);
    expect(last.headers[TIMESTAMP_HEADER]).toBe('1700000000');
    expect(last.headers[SIGNATURE_HEADER]).toBe(signHookRequest(SECRET, '1700000000', last.body));
    expect(signHookRequest(SECRET, '1700000000', last.body)).not.toBe(signHookRequest('another-secret-of-enough-length', '1700000000', last.body));
  });

  it("turns a deny answer into the reference's hook error text", async () => {
    const out = await runPreToolUseHooks([hook('/deny')], input, { signal: new AbortController().signal, log: memoryLogger().log });
    expect(out.permission).toEqual({ behavior: 'deny', message: 'PreToolUse:Bash hook error: rm is not allowed here', hookName: 'PreToolUse:Bash' });
  });

  it('treats an empty body as "carry on"', async () => {
    const out = await runPreToolUseHooks([hook('/empty')], input, { signal: new AbortController().signal, log: memoryLogger().log });
    expect(out).toEqual({ additionalContext: [], preventContinuation: false });
  });

  it('fails open or closed on an error status, a bad body and a timeout, as configured', async () => {
    const signal = new AbortController().signal;
    for (const path of ['/error', '/nonsense']) {
      const open = await runPreToolUseHooks([hook(path)], input, { signal, log: memoryLogger().log });
      expect(open.permission).toBeUndefined();
      const closed = await runPreToolUseHooks([hook(path, { failMode: 'closed' })], input, { signal, log: memoryLogger().log });
      expect(closed.permission?.behavior).toBe('deny');
    }
    const closed = await runPreToolUseHooks([hook('/hang', { failMode: 'closed', timeoutMs: 100 })], input, { signal, log: memoryLogger().log });
    expect(closed.permission?.message).toBe(`PreToolUse:Bash hook error: hook PreToolUse:${new URL(url).host} failed: timed out after 100ms`);
  });

  it('requires https except to a host the operator names', () => {
    expect(httpHookConfigSchema.safeParse({ event: 'PreToolUse', url: 'ftp://example.com/h', secret: SECRET }).success).toBe(false);
    expect(policy().refusalOf('http://example.com/h')).toMatch(/^plain http:\/\/ is used only for a host STRATUS_PRIVATE_NETWORK_ALLOW names/);
    expect(policy().refusalOf('https://example.com/h')).toBeUndefined();
    expect(policy().refusalOf(`${url}/h`)).toBeUndefined();
  });
});

describe('slow hooks', () => {
  it('are logged past 2 s with the reference wording, and at debug level past 500 ms', async () => {
    const quick: HookDefinition = { name: 'quick', event: 'PreToolUse', timeoutMs: 1_000, failMode: 'open', run: async () => ({}) };
    const input: HookInput = { event: 'PreToolUse', sessionId: 's', turnId: 't', toolName: 'Edit', toolUseId: 'u', toolInput: {}, permissionMode: 'default' };
    for (const [step, level, msg] of [
      [2_500, 'info', 'Slow PreToolUse hooks: 2500ms for Edit'],
      [600, 'debug', 'PreToolUse hooks took 600ms for Edit'],
    ] as const) {
      // The phase and the hook start at 0 and end at `step`.
      const readings = [0, 0, step];
      const clock = () => (readings.length > 1 ? readings.shift()! : readings[0]!);
      const { log, lines } = memoryLogger();
      await runHooks([quick], input, { signal: new AbortController().signal, log, clock });
      expect(lines.find((l) => l.message === msg)?.level).toBe(level.toUpperCase());
    }
  });
});
