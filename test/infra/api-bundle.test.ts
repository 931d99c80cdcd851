import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleLambda, CONSOLE_BUILD_DIR, ENTRIES, REPO_ROOT, startFiles } from '../../infra/constructs/bundle-options.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { tableEnvironment, tableNames } from '../../functions/stores/tables.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../../local/scripted-model/server.ts';

/** The API function's start path (index.mjs and the chunks it imports statically) stays within this (npm run bench -- bundle). */
const START_PATH_CAP_BYTES = 1_500 * 1024;

/**
 * The files Lambda runs are the esbuild bundle and its chunks, not the TypeScript sources:
 * ESM/CommonJS interop inside bundled dependencies, and chunks loaded by dynamic imports, only
 * break at run time. This builds the API bundle as the CDK app does (bundleLambda) and serves
 * three Function URL events with it in a fresh node process, its
 * secrets read from a Secrets Manager-protocol server.
 */
describe('the bundled API function', () => {
  const tmp = makeTempDir();
  let secrets: Server;
  let secretsUrl: string;

  beforeAll(async () => {
    secrets = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ Name: SecretId, SecretString: SecretId === 'tokens' ? 'tok_bundle=tenant-b' : 'sk-ant-bundle' }));
      });
    });
    await new Promise<void>((resolve) => secrets.listen(0, '127.0.0.1', resolve));
    secretsUrl = `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => secrets.close(() => resolve()));
    tmp.cleanup();
  });

  it('loads its deps from the environment and secrets, and answers through the streaming handler', async () => {
    const bundle = path.join(tmp.dir, 'api', 'index.mjs');
    // The web console ships as files beside the bundle, as the CDK bundling hook copies them.
    const metafile = bundleLambda(ENTRIES.api, path.dirname(bundle), { [CONSOLE_BUILD_DIR]: 'console' });
    // What a cold start compiles: within the cap, and without the packages loaded on first use.
    const start = startFiles(metafile, bundle);
    const startBytes = start.reduce((sum, f) => sum + metafile.outputs[f]!.bytes, 0);
    expect(startBytes).toBeGreaterThan(100_000);
    expect(startBytes).toBeLessThanOrEqual(START_PATH_CAP_BYTES);
    const startInputs = start.flatMap((f) => Object.keys(metafile.outputs[f]!.inputs));
    expect(startInputs.filter((input) => /node_modules\/zod\/v4\/locales\/(?!en\.js)|node_modules\/@anthropic-ai\/sdk\/client\.mjs/.test(input))).toEqual([]);
    // The AWS SDK clients most requests never call, and croner (schedules only), load on first use.
    expect(
      startInputs.filter((input) => /node_modules\/(@aws-sdk\/client-(s3|lambda|sts|scheduler)|@aws-sdk\/s3-presigned-post|croner)\//.test(input)),
    ).toEqual([]);
    expect(startInputs).toContain('node_modules/@aws-sdk/client-dynamodb/dist-es/DynamoDBClient.js');
    // The A2A SDK is bundled (a chunk of its own) with its framework-free transport: Hono serves it, Express is never bundled.
    expect(Object.keys(metafile.inputs).filter((input) => input.includes('node_modules/@a2a-js/sdk/'))).not.toEqual([]);
    expect(Object.keys(metafile.inputs).filter((input) => /node_modules\/(express|@a2a-js\/sdk\/dist\/server\/express)\//.test(input))).toEqual([]);
    expect(startInputs).toContain('node_modules/zod/v4/locales/en.js');
    const script = path.join(tmp.dir, 'invoke.mjs');
    writeFileSync(script, INVOKE_SCRIPT);
    const { stdout } = await promisify(execFile)(process.execPath, [script, bundle], {
      env: {
        PATH: process.env.PATH,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsUrl,
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'example',
        AWS_REGION: 'eu-west-1',
        ...tableEnvironment(tableNames('stratus-test')),
        STRATUS_SELF_FUNCTION: 'stratus-test-api',
        STRATUS_BUCKET: 'stratus-test-bucket',
        STRATUS_RUNNER_FUNCTION: 'stratus-test-runner',
        STRATUS_ANTHROPIC_KEY_SECRET: 'anthropic',
        STRATUS_API_TOKENS_SECRET: 'tokens',
        STRATUS_WORKSPACE_ROLE_ARN: 'arn:aws:iam::123456789012:role/stratus-test-workspace-access',
      },
    });
    // The function logs to stdout as on Lambda (one access-log line per request); the script's results are the last line.
    const lines = stdout.trim().split('\n');
    expect(lines.some((line) => line.includes('"message":"request"') && line.includes('"path":"/healthz"'))).toBe(true);
    expect(JSON.parse(lines.at(-1)!)).toEqual([
      { status: 200, body: '{"ok":true}' },
      {
        status: 400,
        body: JSON.stringify({ error: { code: 'invalid_request', message: 'Invalid body: "title": Invalid input: expected string, received number' } }),
      },
      // The reference page, rendered by the bundle from its own document, and its stylesheet.
      { status: 200, title: true, style: true },
      { status: 200, type: 'text/css; charset=utf-8', rules: true },
      { status: 200, body: readFileSync(path.join(REPO_ROOT, CONSOLE_BUILD_DIR, 'index.html'), 'utf8') },
      { status: 200, url: 'https://x.lambda-url.eu-west-1.on.aws/a2a' },
      { status: 200, code: -32601 },
    ]);
  }, 180_000);
});

describe('the model clients and the X-Ray tracer, bundled', () => {
  const tmp = makeTempDir();
  let model: ScriptedModelServer;
  beforeAll(async () => {
    model = await startScriptedModelServer();
  });
  afterAll(async () => {
    await model.close();
    tmp.cleanup();
  });

  it('stream a Bedrock call, call the Anthropic API, load the tracer and the shell grammar from a bundle built with the Lambda options', async () => {
    // The same modules the API bundle holds, built the same way: interop between the Bedrock
    // SDK's CommonJS dependencies and the ESM output only shows when the bundle runs.
    const entry = path.join(tmp.dir, 'entry.ts');
    writeFileSync(entry, BEDROCK_ENTRY.replaceAll('REPO', REPO_ROOT));
    const bundle = path.join(tmp.dir, 'out', 'index.mjs');
    bundleLambda(entry, path.dirname(bundle));
    model.enqueue({ content: [{ type: 'text', text: 'bundled hello' }] });
    model.enqueue({ content: [{ type: 'text', text: 'anthropic hello' }] });
    const { stdout } = await promisify(execFile)(process.execPath, [bundle, model.url], {
      env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
      text: 'bundled hello',
      anthropic: 'anthropic hello',
      tracer: 'loaded',
      readOnly: [true, false],
    });
    expect(model.requests.map((r) => r.body.model)).toEqual(['global.anthropic.claude-sonnet-5-5', 'claude-sonnet-5-5']);
  }, 180_000);
});

const BEDROCK_ENTRY = `
import { configSchema } from 'REPO/functions/deps/config.ts';
import { createModelClient } from 'REPO/functions/handlers/model-client.ts';
import { createXRayTracing } from 'REPO/functions/handlers/xray-tracing.ts';
import { isReadOnlyCommand } from 'REPO/functions/tools/bash/classify-command.ts';
import { loadShellParser } from 'REPO/functions/tools/bash/shell-parser.ts';
const client = createModelClient({
  region: 'eu-west-1', localCredentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, endpoints: { bedrock: process.argv[2] },
  model: configSchema.shape.model.parse({ provider: 'bedrock' }),
});
const stream = await client.messages.create({ model: 'global.anthropic.claude-sonnet-5-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], stream: true });
let text = '';
for await (const e of stream) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
// The Anthropic API's client: a chunk of its own, loaded on this first call.
const anthropic = createModelClient({
  region: 'eu-west-1', endpoints: {},
  model: configSchema.shape.model.parse({ provider: 'anthropic', apiKey: 'sk-ant-bundle', baseURL: process.argv[2] }),
});
const direct = await anthropic.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
const tracing = await createXRayTracing('bundle-test');
// The shell grammar: web-tree-sitter is a chunk of its own and finds its wasm beside it.
await loadShellParser();
const readOnly = [isReadOnlyCommand('ls -la'), isReadOnlyCommand('rm -rf x')];
process.stdout.write(JSON.stringify({ text, anthropic: direct.content[0].text, tracer: typeof tracing.startSpan === 'function' ? 'loaded' : 'missing', readOnly }) + '\\n');
`;

/** Plays the Lambda runtime: defines its globals, imports the handler, sends Function URL events. */
const INVOKE_SCRIPT = `
import { Writable } from 'node:stream';
let meta;
globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s, m) => { meta = m; return s; } } };
const { handler } = await import(process.argv[2]);
const context = { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'req' };
const call = async (method, path, headers = {}, body) => {
  const chunks = [];
  const out = new Writable({ write(c, _e, cb) { chunks.push(String(c)); cb(); } });
  const done = new Promise((r) => out.on('finish', r));
  await handler({ version: '2.0', rawPath: path, rawQueryString: '', headers: { host: 'x.lambda-url.eu-west-1.on.aws', ...headers },
    requestContext: { http: { method, path, sourceIp: '203.0.113.9' }, domainName: 'x.lambda-url.eu-west-1.on.aws' }, body, isBase64Encoded: false }, out, context);
  await done;
  return { status: meta.statusCode, body: chunks.join('') };
};
// The second request passes auth (tokens from the secret) and fails validation before any AWS call.
const results = [
  await call('GET', '/healthz'),
  await call('POST', '/v1/sessions', { authorization: 'Bearer tok_bundle', 'content-type': 'application/json' }, '{"title":5}'),
  await call('GET', '/docs').then(({ status, body }) => ({ status, title: body.includes('<title>Stratus API</title>'), style: body.includes('href="/docs/reference.css"') })),
  await call('GET', '/docs/reference.css').then(({ status, body }) => ({ status, type: meta.headers['content-type'], rules: body.includes('.method') })),
  // The console's page, read from the folder beside the bundle.
  await call('GET', '/console/'),
  // The A2A SDK's chunks (loaded on first use): the agent card, and a JSON-RPC call through its transport.
  await call('GET', '/.well-known/agent-card.json').then(({ status, body }) => ({ status, url: JSON.parse(body).supportedInterfaces[0].url })),
  await call('POST', '/a2a', { authorization: 'Bearer tok_bundle', 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod","params":{}}')
    .then(({ status, body }) => ({ status, code: JSON.parse(body).error.code })),
];
process.stdout.write(JSON.stringify(results));
process.exit(0);
`;
