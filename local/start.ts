import path from 'node:path';
import { SETTINGS, SettingError, settingsFromEnv, type EnvSettings } from '../functions/deps/settings.ts';
import { SCRIPTED_MODEL_NAME } from '../functions/model/model-names.ts';
import { ENDPOINT_VARIABLES, externalEndpointsFromEnv, type ExternalEndpoints } from './external-endpoints.ts';
import { localPortsFromEnv, PORT_VARIABLES, type LocalPorts } from './ports.ts';
import { LOCAL_MODEL_REQUESTS_KEPT, startLocalStack } from './stack.ts';

/**
 * `npm start`: the whole product on this machine. It reads the same settings as the Lambda
 * handlers, through the same function (functions/deps/settings.ts): budgets, model prices and
 * GitHub issue fixing included; `npm start -- --help` lists them. A malformed value stops
 * start-up with a message naming the variable.
 */
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('npm start: Stratus on this machine. Settings (environment variables):\n');
  const width = Math.max(...SETTINGS.filter((s) => s.where !== 'aws').map((s) => s.name.length));
  for (const s of SETTINGS.filter((x) => x.where !== 'aws')) {
    console.log(`  ${s.name.padEnd(width)}  ${s.meaning.replaceAll('`', '')} (default: ${s.default.replaceAll('`', '')})`);
  }
  console.log(
    `\nAWS-only: ${SETTINGS.filter((x) => x.where === 'aws')
      .map((x) => x.name.split(',')[0])
      .join(', ')} and the deployment's resources, set by the CDK app (docs/deploy.md).`,
  );
  process.exit(0);
}

const env = process.env;
let settings: EnvSettings;
let ports: LocalPorts;
let external: ExternalEndpoints | undefined;
try {
  settings = settingsFromEnv(env);
  ports = localPortsFromEnv(env, { api: 8787 });
  external = externalEndpointsFromEnv(env);
} catch (err) {
  if (!(err instanceof SettingError)) throw err;
  console.error(`stratus: ${err.message}\n(npm start -- --help lists every setting.)`);
  process.exit(2);
}
const dataDir = path.resolve(env.STRATUS_DATA_DIR || '.stratus-data');
const scripted = !settings.model.apiKey && settings.model.provider !== 'bedrock';
const stack = await startLocalStack({
  dataDir,
  port: ports.api,
  ports,
  // The bundled scripted model has its own name, which the price table prices at 0.
  ...(scripted ? { model: { name: settings.model.name ?? SCRIPTED_MODEL_NAME } } : {}),
  anthropic:
    settings.model.apiKey && settings.model.provider !== 'bedrock'
      ? { apiKey: settings.model.apiKey, baseURL: settings.model.baseURL, model: settings.model.name }
      : undefined,
  bedrock: settings.model.provider === 'bedrock' ? { region: env.AWS_REGION || 'us-east-1', model: settings.model.name } : undefined,
  apiTokens: settings.apiTokens,
  settings,
  logLevel: settings.logLevel ?? 'info',
  // A server that runs for days must not keep every model request it answered.
  keepModelRequests: LOCAL_MODEL_REQUESTS_KEPT,
  external,
});

const line = '='.repeat(72);
console.log(`\n${line}`);
console.log(`Stratus is running at ${stack.apiUrl}   (API reference: ${stack.apiUrl}/docs)`);
console.log(`Web console: ${stack.apiUrl}/console/   (sign in with the API token)`);
console.log(`API token:   ${stack.token}`);
if (!settings.apiTokens) console.log(`Admin token: in ${path.join(dataDir, 'admin-token')} (npm run -s stratus -- admin tokens …)`);
console.log(`Data folder: ${dataDir}`);
const where = (label: string, url: string, variable: string) => console.log(`  ${label.padEnd(24)} ${url.padEnd(24)} (${variable})`);
console.log('Ports (each settable; 0 = any free port):');
where('API', stack.apiUrl, PORT_VARIABLES.api);
// An existing endpoint (STRATUS_*_ENDPOINT) is printed as such, with its variable.
const standIn = (label: string, existing: string, part: keyof typeof ENDPOINT_VARIABLES) =>
  external?.endpoints[part] ? where(existing, stack.urls[part], ENDPOINT_VARIABLES[part]) : where(label, stack.urls[part], PORT_VARIABLES[part]);
standIn('DynamoDB stand-in', 'DynamoDB (existing)', 'dynamodb');
standIn('S3 stand-in', 'S3 (existing)', 's3');
standIn('runner (Lambda Invoke)', 'Lambda Invoke (existing)', 'lambda');
if (stack.model) where('scripted model', stack.model.url, PORT_VARIABLES.model);
if (stack.model) {
  console.log('');
  console.log('!!! NO ANTHROPIC_API_KEY SET: using the bundled SCRIPTED model server !!!');
  console.log(`!!! at ${stack.model.url}. It is deterministic, not intelligent: a prompt with a`);
  console.log('!!! `backticked command` runs it with Bash; a /workspace/... path is read with Read.');
  console.log(`!!! To make it call other tools: POST ${stack.model.url}/_script (docs/local-stack.md).`);
} else {
  console.log(`Model: ${stack.urls.model}`);
}
console.log(`\nTry:\n  npm run -s stratus -- login --url ${stack.apiUrl} --token ${stack.token}`);
console.log(`  npm run -s stratus -- new && npm run -s stratus -- run "please run \\\`ls\\\`"`);
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
