import path from 'node:path';
import { budgetSettingsFromEnv, githubConfigFromEnv, parseTokens } from '../functions/deps/config.ts';
import { LOCAL_MODEL_REQUESTS_KEPT, startLocalStack } from './stack.ts';

/**
 * `npm start`: the whole product on this machine. Configuration (all optional):
 *   PORT                 API port (default 8787)
 *   STRATUS_DATA_DIR     data folder (default ./.stratus-data)
 *   STRATUS_API_TOKENS   "token=tenant,..." (default: one generated token, kept in the data folder)
 *   ANTHROPIC_API_KEY    use the real model (else the bundled scripted model)
 *   ANTHROPIC_BASE_URL   a compatible endpoint; STRATUS_MODEL the model name
 *   STRATUS_MODEL_PROVIDER=bedrock  Amazon Bedrock in AWS_REGION (default us-east-1) with the
 *                        default AWS credential chain; STRATUS_MODEL a Bedrock model or inference profile id
 *   STRATUS_LOG_LEVEL    debug | info | warn | error (default info)
 *   STRATUS_STAGE        the stage key of log lines and dimension of metrics (default local)
 *   POWERTOOLS_LOGGER_SAMPLE_RATE  share of requests logged at debug (default 0)
 *   STRATUS_LEASE_MS     the longest a crashed turn keeps its session locked (default 60000)
 *   STRATUS_HEARTBEAT_MS a running turn's heartbeat; three missed beats free the session (default 2000)
 *   STRATUS_MAX_MODEL_CALLS, STRATUS_BUDGETS, STRATUS_TENANT_BUDGETS, STRATUS_MODEL_PRICES budgets and prices (README)
 *   STRATUS_GITHUB_*     GitHub issue fixing (README, "Fix GitHub issues")
 */
const env = process.env;
const dataDir = path.resolve(env.STRATUS_DATA_DIR ?? '.stratus-data');
const stack = await startLocalStack({
  dataDir,
  port: Number(env.PORT ?? 8787),
  anthropic:
    env.ANTHROPIC_API_KEY && env.STRATUS_MODEL_PROVIDER !== 'bedrock'
      ? { apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL || undefined, model: env.STRATUS_MODEL || undefined }
      : undefined,
  bedrock: env.STRATUS_MODEL_PROVIDER === 'bedrock' ? { region: env.AWS_REGION || 'us-east-1', model: env.STRATUS_MODEL || undefined } : undefined,
  apiTokens: env.STRATUS_API_TOKENS ? parseTokens(env.STRATUS_API_TOKENS) : undefined,
  logLevel: (env.STRATUS_LOG_LEVEL as 'info' | undefined) ?? 'info',
  observability: {
    ...(env.STRATUS_STAGE ? { stage: env.STRATUS_STAGE } : {}),
    ...(env.POWERTOOLS_LOGGER_SAMPLE_RATE ? { logSampleRate: Number(env.POWERTOOLS_LOGGER_SAMPLE_RATE) } : {}),
  },
  turn: {
    ...(env.STRATUS_LEASE_MS ? { leaseMs: Number(env.STRATUS_LEASE_MS) } : {}),
    ...(env.STRATUS_HEARTBEAT_MS ? { heartbeatMs: Number(env.STRATUS_HEARTBEAT_MS) } : {}),
    ...(env.STRATUS_MAX_MODEL_CALLS ? { maxModelCalls: Number(env.STRATUS_MAX_MODEL_CALLS) } : {}),
  },
  ...budgetSettingsFromEnv(env),
  github: githubConfigFromEnv(env),
  // A server that runs for days must not keep every model request it answered.
  keepModelRequests: LOCAL_MODEL_REQUESTS_KEPT,
});

const line = '='.repeat(72);
console.log(`\n${line}`);
console.log(`Stratus is running at ${stack.apiUrl}`);
console.log(`API token:   ${stack.token}`);
console.log(`Data folder: ${dataDir}`);
console.log(`DynamoDB ${stack.urls.dynamodb} | S3 ${stack.urls.s3} | runner (Lambda Invoke) ${stack.urls.lambda}`);
if (stack.model) {
  console.log('');
  console.log('!!! NO ANTHROPIC_API_KEY SET: using the bundled SCRIPTED model server !!!');
  console.log(`!!! at ${stack.model.url}. It is deterministic, not intelligent: a prompt with a`);
  console.log('!!! `backticked command` runs it with Bash; a /workspace/... path is read with Read.');
} else {
  console.log(`Model: ${stack.urls.model}`);
}
console.log(`\nTry:\n  curl -s -X POST ${stack.apiUrl}/v1/sessions -H 'authorization: Bearer ${stack.token}' \\`);
console.log(`       -H 'content-type: application/json' -d '{"files":{"hello.txt":"hi"}}'`);
console.log(`${line}\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log('stopping...');
    void stack.stop().then(() => process.exit(0));
  });
}
