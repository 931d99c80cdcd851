import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../../functions/deps/config.ts';
import { SETTINGS, settingsFromEnv } from '../../../functions/deps/settings.ts';
import { startLocalStack } from '../../../local/stack.ts';
import { makeTempDir } from '../../support/temp-dir.ts';
import { readFileSync } from 'node:fs';

const awsEnv = {
  AWS_REGION: 'eu-west-1', STRATUS_BUCKET: 'b', STRATUS_RUNNER_FUNCTION: 'r', STRATUS_SELF_FUNCTION: 's',
  STRATUS_SESSIONS_TABLE: 't1', STRATUS_MESSAGES_TABLE: 't2', STRATUS_EVENTS_TABLE: 't3', STRATUS_SCHEDULES_TABLE: 't4', STRATUS_APPROVALS_TABLE: 't5',
  ANTHROPIC_API_KEY: 'k', STRATUS_API_TOKENS: 'tok=ten',
};
const shared = { STRATUS_MAX_MODEL_CALLS: '7', STRATUS_PERMISSION_MODE: 'default', STRATUS_MAX_TOOL_CONCURRENCY: '3', STRATUS_CORS_ORIGINS: 'https://a.example, https://b.example', STRATUS_SSE_HEARTBEAT_MS: '5_000', STRATUS_CONTEXT_WINDOW: '100000' };

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
      }
    } finally {
      await local.stop();
      tmp.cleanup();
    }
    // Unset, the defaults hold.
    expect(configFromEnv(awsEnv).turn.maxModelCalls).toBe(50);
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
