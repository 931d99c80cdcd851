import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadLambdaDeps } from '../../../functions/handlers/lambda-deps.ts';
import { EGRESS_TOKEN_TTL_MS } from '../../../functions/runner-client/egress-tokens.ts';
import { verifyEgressToken } from '../../../sandbox-runner/common/egress-token.ts';
import type { RunnerRequest } from '../../../sandbox-runner/protocol.ts';
import { tableEnvironment, tableNames } from '../../../functions/stores/tables.ts';
import { startScriptedModelServer } from '../../../local/scripted-model/server.ts';

const ANTHROPIC_SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:stratus-dev/anthropic-api-key-AbCdEf';
const TOKENS_SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:stratus-dev/api-tokens-AbCdEf';

/** What the code writes to stdout from now on: in Lambda, where CloudWatch takes EMF metric documents from. */
function captureStdout(): { metricNames(): string[] } {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => ((out += String(chunk)), true));
  return {
    metricNames: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{"_aws"'))
        .flatMap((l) =>
          (JSON.parse(l) as { _aws: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] } })._aws.CloudWatchMetrics.flatMap((m) =>
            m.Metrics.map((x) => x.Name),
          ),
        ),
  };
}

describe('loadLambdaDeps', () => {
  let server: Server;
  const values = new Map<string, string>();
  const asked: string[] = [];
  const saved = { ...process.env };

  beforeAll(async () => {
    // Speaks the Secrets Manager JSON protocol for GetSecretValue.
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        asked.push(`${String(req.headers['x-amz-target'])} ${SecretId}`);
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ ARN: SecretId, Name: SecretId, SecretString: values.get(SecretId), VersionId: 'v1' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // The SDK's own per-service endpoint and credential variables: no code path of ours changes.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'example',
    });
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    process.env = saved;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const env = {
    AWS_REGION: 'eu-west-1',
    ...tableEnvironment(tableNames('stratus-dev')),
    STRATUS_SELF_FUNCTION: 'stratus-dev-api',
    STRATUS_BUCKET: 'stratus-dev-bucket',
    STRATUS_RUNNER_FUNCTION: 'stratus-dev-runner',
    STRATUS_MODEL: 'claude-sonnet-4-6',
    STRATUS_ANTHROPIC_KEY_SECRET: ANTHROPIC_SECRET,
    STRATUS_API_TOKENS_SECRET: TOKENS_SECRET,
    STRATUS_WORKSPACE_ROLE_ARN: 'arn:aws:iam::123456789012:role/stratus-dev-workspace-access',
  };

  it('builds the config from the environment and the two secrets read from Secrets Manager', async () => {
    values.set(ANTHROPIC_SECRET, 'sk-ant-test\n');
    values.set(TOKENS_SECRET, 'tok_a=tenant-a,tok_b=tenant-b');
    asked.length = 0;
    const deps = await loadLambdaDeps(env);
    expect(asked.sort()).toEqual([`secretsmanager.GetSecretValue ${ANTHROPIC_SECRET}`, `secretsmanager.GetSecretValue ${TOKENS_SECRET}`]);
    expect(deps.config).toMatchObject({
      region: 'eu-west-1',
      tables: { sessions: 'stratus-dev-sessions', messages: 'stratus-dev-messages' },
      bucket: 'stratus-dev-bucket',
      runnerFunction: 'stratus-dev-runner',
      endpoints: {},
      model: { apiKey: 'sk-ant-test', name: 'claude-sonnet-4-6' },
      apiTokens: { tok_a: 'tenant-a', tok_b: 'tenant-b' },
    });
    expect(deps.config.localCredentials).toBeUndefined();
  });

  it('with Bedrock, reads no key secret and signs model calls with the credential chain (the role in AWS)', async () => {
    const model = await startScriptedModelServer();
    const stdout = captureStdout();
    try {
      values.set(TOKENS_SECRET, 'tok=t');
      asked.length = 0;
      const { STRATUS_ANTHROPIC_KEY_SECRET: _none, ...bedrockEnv } = env;
      const deps = await loadLambdaDeps({
        ...bedrockEnv,
        STRATUS_MODEL_PROVIDER: 'bedrock',
        STRATUS_MODEL: 'eu.anthropic.claude-sonnet-5-5',
        STRATUS_BEDROCK_ENDPOINT: model.url,
      });
      expect(asked).toEqual([`secretsmanager.GetSecretValue ${TOKENS_SECRET}`]);
      expect(deps.config.model).toMatchObject({ provider: 'bedrock', name: 'eu.anthropic.claude-sonnet-5-5' });
      expect(deps.config.model.apiKey).toBeUndefined();
      model.enqueue({ content: [{ type: 'text', text: 'hello from Bedrock' }] });
      const stream = await deps.model.messages.create({
        model: deps.config.model.name,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      expect(text).toBe('hello from Bedrock');
      // The environment's credentials here; the function role's in Lambda (the same default chain).
      expect(model.requests[0]!.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
      // In Lambda the model call's metrics are EMF documents on stdout.
      expect(stdout.metricNames()).toContain('ModelCallDuration');
    } finally {
      await model.close();
    }
  });

  it('refuses the deploy-time placeholder of the tokens secret without echoing it', async () => {
    values.set(TOKENS_SECRET, 'Xq3!placeholder-value');
    const err = await loadLambdaDeps(env).catch((e: Error) => e);
    expect((err as Error).message).toBe(`The secret ${TOKENS_SECRET} must hold "token=tenant" pairs separated by commas (docs/deploy.md).`);
  });

  it("with the egress proxy, signs each request's allow-list (a git import: its URL's host) with the key from Secrets Manager", async () => {
    const KEY_SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:stratus-dev/egress-token-key-AbCdEf';
    values.set(TOKENS_SECRET, 'tok=t');
    values.set(KEY_SECRET, 'egress-key-from-secrets-manager');
    // Speaks the Lambda Invoke protocol and keeps each payload the runner would get.
    const payloads: RunnerRequest[] = [];
    const lambda = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        payloads.push(JSON.parse(body) as RunnerRequest);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: { kind: 'tool_error', message: 'recorded' } }));
      });
    });
    await new Promise<void>((resolve) => lambda.listen(0, '127.0.0.1', resolve));
    process.env.AWS_ENDPOINT_URL_LAMBDA = `http://127.0.0.1:${(lambda.address() as AddressInfo).port}`;
    const stdout = captureStdout();
    try {
      asked.length = 0;
      const deps = await loadLambdaDeps({ ...env, STRATUS_EGRESS: 'proxy', STRATUS_EGRESS_KEY_SECRET: KEY_SECRET });
      expect(deps.config.egress).toBe('proxy');
      expect(asked).toContain(`secretsmanager.GetSecretValue ${KEY_SECRET}`);
      const workspace = { bucket: 'b', id: 'ws_1', version: 1, credentials: { accessKeyId: 'a', secretAccessKey: 's' } };
      const now = Date.now();
      await deps.runner.invoke({
        sessionId: 'ses_a',
        workspace,
        network: { allowedDomains: ['registry.npmjs.org', '*.github.com'] },
        op: { type: 'bash', command: 'true', timeoutMs: 1_000 },
      });
      await deps.runner.invoke({
        sessionId: 'ses_a',
        workspace: { ...workspace, version: 0 },
        op: { type: 'import_git', url: 'https://git.example.com/r.git', depth: 1 },
      });
      await deps.runner.invoke({ sessionId: 'ses_a', workspace, op: { type: 'list_files' } });
      const grants = payloads.map((p) =>
        p.network?.egressToken ? verifyEgressToken('egress-key-from-secrets-manager', p.network.egressToken, now) : undefined,
      );
      expect(grants.map((g) => (g?.ok ? [g.grant.sessionId, g.grant.allowedDomains] : g))).toEqual([
        ['ses_a', ['registry.npmjs.org', '*.github.com']],
        ['ses_a', ['git.example.com:443']],
        undefined,
      ]);
      const expiry = grants[0]?.ok ? grants[0].grant.expiresAt - now : 0;
      expect(expiry).toBeGreaterThanOrEqual(EGRESS_TOKEN_TTL_MS - 5_000);
      expect(expiry).toBeLessThanOrEqual(EGRESS_TOKEN_TTL_MS + 5_000);
      expect(stdout.metricNames().filter((n) => n === 'RunnerCallDuration')).toHaveLength(3);
    } finally {
      delete process.env.AWS_ENDPOINT_URL_LAMBDA;
      await new Promise<void>((resolve) => lambda.close(() => resolve()));
    }
  });

  it('names the variable the CDK app should have set', async () => {
    const { STRATUS_WORKSPACE_ROLE_ARN: _omitted, ...partial } = env;
    values.set(TOKENS_SECRET, 'tok=t');
    await expect(loadLambdaDeps(partial)).rejects.toThrow('STRATUS_WORKSPACE_ROLE_ARN is not set; the CDK app sets it on every function.');
  });
});
