import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../../functions/deps/config.ts';
import { DEFAULT_MAX_MODEL_CALLS_PER_TURN } from '../../../functions/stores/budgets.ts';
import { tableEnvironment, tableNames } from '../../../functions/stores/tables.ts';
import { SETTINGS, settingsFromEnv } from '../../../functions/deps/settings.ts';
import { DEFAULT_SETUP_REGISTRIES } from '../../../functions/session-settings/setup-registries.ts';
import { startLocalStack } from '../../../local/stack.ts';
import { makeTempDir } from '../../support/temp-dir.ts';
import { readFileSync } from 'node:fs';

const awsEnv = {
  AWS_REGION: 'eu-west-1',
  STRATUS_BUCKET: 'b',
  STRATUS_RUNNER_FUNCTION: 'r',
  STRATUS_SELF_FUNCTION: 's',
  ...tableEnvironment(tableNames('t')),
  ANTHROPIC_API_KEY: 'k',
  STRATUS_API_TOKENS: 'tok=ten',
};
const shared = {
  STRATUS_MAX_MODEL_CALLS: '7',
  STRATUS_PERMISSION_MODE: 'default',
  STRATUS_MAX_TOOL_CONCURRENCY: '3',
  STRATUS_CORS_ORIGINS: 'https://a.example, https://b.example',
  STRATUS_SSE_HEARTBEAT_MS: '5_000',
  STRATUS_CONTEXT_WINDOW: '100000',
  STRATUS_BUDGETS: '{"maxCostUsd":5}',
  STRATUS_TENANT_BUDGETS: '{"acme":{"maxTurns":3}}',
  STRATUS_MODEL_PRICES: '{"my-model":{"inputPerMTok":1,"outputPerMTok":2}}',
  STRATUS_PRIVATE_NETWORK_ALLOW: '10.0.0.0/8, mcp.internal.example, 127.0.0.1:9000',
  STRATUS_SETUP_REGISTRIES: 'npm.internal.example, 127.0.0.1:9000',
  STRATUS_SETUP_TIMEOUT_SECONDS: '300',
  STRATUS_GITHUB_WEBHOOK_SECRET: 'hook-secret',
  STRATUS_GITHUB_TOKEN: 'ghp_x',
  STRATUS_GITHUB_API_URL: 'https://ghe.example/api/v3',
  STRATUS_GITHUB_COMMIT_AUTHOR: 'Bot <bot@example.com>',
};

describe('one configuration for the local stack and Lambda', () => {
  it('reads the same settings in both, through the same function', async () => {
    const lambda = configFromEnv({ ...awsEnv, ...shared });
    const tmp = makeTempDir();
    const local = await startLocalStack({ dataDir: tmp.dir, settings: settingsFromEnv(shared) });
    try {
      for (const config of [lambda, local.deps.config]) {
        expect(config.turn.maxModelCalls).toBe(7);
        expect(config.permissions.defaultMode).toBe('default');
        expect(config.maxToolConcurrency).toBe(3);
        expect(config.api).toEqual({ corsOrigins: ['https://a.example', 'https://b.example'], sseHeartbeatMs: 5_000 });
        expect(config.model.contextWindow).toBe(100_000);
        expect(config.outbound.privateNetworkAllow).toEqual(['10.0.0.0/8', 'mcp.internal.example', '127.0.0.1:9000']);
        expect(config.setup).toEqual({ registries: ['npm.internal.example', '127.0.0.1:9000'], timeoutSeconds: 300 });
        expect(config.budgets).toEqual({ defaults: { maxCostUsd: 5 }, tenants: { acme: { maxTurns: 3 } } });
        expect(config.modelPrices['my-model']).toEqual({ inputPerMTok: 1, outputPerMTok: 2 });
        expect(config.modelPrices).toHaveProperty('claude-opus');
        expect(config.github).toMatchObject({
          webhookSecret: 'hook-secret',
          token: 'ghp_x',
          apiUrl: 'https://ghe.example/api/v3',
          commitAuthor: { name: 'Bot', email: 'bot@example.com' },
        });
      }
      // The worker function is the deployment's; locally, deliveries go to the in-process worker.
      expect(configFromEnv({ ...awsEnv, STRATUS_GITHUB_WORKER_FUNCTION: 'gh-worker' }).github.workerFunction).toBe('gh-worker');
      expect(local.deps.config.github.workerFunction).not.toBe('gh-worker');
    } finally {
      await local.stop();
      tmp.cleanup();
    }
    // Unset, the defaults hold.
    expect(configFromEnv(awsEnv).turn.maxModelCalls).toBe(DEFAULT_MAX_MODEL_CALLS_PER_TURN);
    expect(configFromEnv(awsEnv).github.apiUrl).toBe('https://api.github.com');
    expect(configFromEnv(awsEnv).outbound).toEqual({ privateNetworkAllow: [], ownEndpoints: [] });
    // Set-up steps reach the public registries by default, and none when the operator says so.
    expect(configFromEnv(awsEnv).setup).toEqual({ registries: [...DEFAULT_SETUP_REGISTRIES], timeoutSeconds: 600 });
    expect(DEFAULT_SETUP_REGISTRIES).toEqual(
      expect.arrayContaining(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'proxy.golang.org', 'repo1.maven.org', 'codeload.github.com']),
    );
    expect(configFromEnv({ ...awsEnv, STRATUS_SETUP_REGISTRIES: 'none' }).setup.registries).toEqual([]);
    // On Lambda the runtime API listens on loopback: one of the endpoints no hook or MCP server may reach.
    expect(configFromEnv({ ...awsEnv, AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001' }).outbound.ownEndpoints).toEqual(['127.0.0.1:9001']);
  });

  it('refuses a malformed value with a message naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ STRATUS_MAX_MODEL_CALLS: 'fifty' }, /^STRATUS_MAX_MODEL_CALLS: expected a whole number of at least 1, got "fifty"/],
      [{ STRATUS_LEASE_MS: '-5' }, /^STRATUS_LEASE_MS: /],
      [{ STRATUS_MAX_TOOL_CONCURRENCY: '1000' }, /^STRATUS_MAX_TOOL_CONCURRENCY: expected a whole number from 1 to 100/],
      [{ STRATUS_PERMISSION_MODE: 'yolo' }, /^STRATUS_PERMISSION_MODE: expected one of default, /],
      [{ STRATUS_LOG_LEVEL: 'loud' }, /^STRATUS_LOG_LEVEL: /],
      [{ ANTHROPIC_BASE_URL: 'not a url' }, /^ANTHROPIC_BASE_URL: expected a URL/],
      [{ STRATUS_CORS_ORIGINS: 'https://a.example/path' }, /^STRATUS_CORS_ORIGINS: /],
      [{ STRATUS_API_TOKENS: 'justatoken' }, /^STRATUS_API_TOKENS: /],
      [{ STRATUS_PRIVATE_NETWORK_ALLOW: '10.0.0.0/8, http://x' }, /^STRATUS_PRIVATE_NETWORK_ALLOW: expected host names .*, got "http:\/\/x"/],
      [{ STRATUS_PRIVATE_NETWORK_ALLOW: '10.0.0.0/33' }, /^STRATUS_PRIVATE_NETWORK_ALLOW: /],
      [
        { STRATUS_SETUP_REGISTRIES: 'registry.npmjs.org, https://pypi.org/simple' },
        /^STRATUS_SETUP_REGISTRIES: each entry must be a host name .*, got "https:\/\/pypi.org\/simple"/,
      ],
      [{ STRATUS_SETUP_TIMEOUT_SECONDS: '3600' }, /^STRATUS_SETUP_TIMEOUT_SECONDS: expected a whole number from 1 to 840/],
      [{ STRATUS_BUDGETS: '{maxCostUsd:5}' }, /^STRATUS_BUDGETS: not valid JSON/],
      [{ STRATUS_BUDGETS: '{"maxCostUsd":-1}' }, /^STRATUS_BUDGETS: "maxCostUsd": /],
      [{ STRATUS_TENANT_BUDGETS: '{"acme":{"maxTurn":3}}' }, /^STRATUS_TENANT_BUDGETS: /],
      [{ STRATUS_MODEL_PRICES: '{"m":{"inputPerMTok":1}}' }, /^STRATUS_MODEL_PRICES: "m.outputPerMTok": /],
      [{ STRATUS_GITHUB_API_URL: 'github' }, /^STRATUS_GITHUB_API_URL: expected a URL/],
      [{ STRATUS_GITHUB_COMMIT_AUTHOR: 'just a name' }, /^STRATUS_GITHUB_COMMIT_AUTHOR: expected "Name <email>"/],
      [{ STRATUS_GITHUB_APP_ID: '123' }, /^STRATUS_GITHUB_APP_ID and STRATUS_GITHUB_APP_PRIVATE_KEY: set both/],
    ];
    for (const [env, message] of cases) {
      expect(() => settingsFromEnv(env)).toThrow(message);
      expect(() => configFromEnv({ ...awsEnv, ...env })).toThrow(message);
    }
  });

  it('lists every shared setting in `npm start -- --help` and in the README table; a malformed one stops start-up', { timeout: 90_000 }, () => {
    const tsx = ['--import', 'tsx', 'local/start.ts'];
    const help = spawnSync(process.execPath, [...tsx, '--help'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    expect(help.status).toBe(0);
    const readme = readFileSync('README.md', 'utf8');
    for (const s of SETTINGS) {
      if (s.where !== 'aws') expect(help.stdout).toContain(s.name);
      // (The last entry names the deployment's resources as a group; docs/deploy.md lists them.)
      if (!s.name.includes(',')) expect(readme).toContain(`\`${s.name}\``);
    }
    const bad = spawnSync(process.execPath, [...tsx], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', STRATUS_MAX_MODEL_CALLS: 'lots' } });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('STRATUS_MAX_MODEL_CALLS: expected a whole number');
  });
});
