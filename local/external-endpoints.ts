import { SettingError } from '../functions/deps/settings.ts';
import type { LocalCredentials } from './local-credentials.ts';

/** The services `npm start` can take from elsewhere instead of starting its own stand-in. */
export type ExternalService = 'dynamodb' | 's3' | 'lambda';

/** The variable that names each existing endpoint (also listed in functions/deps/settings.ts SETTINGS). */
export const ENDPOINT_VARIABLES: Record<ExternalService, string> = {
  dynamodb: 'STRATUS_DYNAMODB_ENDPOINT',
  s3: 'STRATUS_S3_ENDPOINT',
  lambda: 'STRATUS_LAMBDA_ENDPOINT',
};

/** Existing endpoints to use, and the key every client signs with there. */
export interface ExternalEndpoints {
  endpoints: Partial<Record<ExternalService, string>>;
  credentials: LocalCredentials;
}

/**
 * Reads the endpoint settings: each an http(s) URL without a path. With any of them set, the
 * stack signs with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (a stand-in started alongside checks
 * the same key), since a key made up at start would not be known to the other service. Returns
 * undefined when none is set: every stand-in is embedded, with a key of its own.
 */
export function externalEndpointsFromEnv(env: NodeJS.ProcessEnv): ExternalEndpoints | undefined {
  const endpoints: ExternalEndpoints['endpoints'] = {};
  for (const [service, name] of Object.entries(ENDPOINT_VARIABLES) as [ExternalService, string][]) {
    const raw = env[name];
    if (raw) endpoints[service] = endpointUrl(name, raw);
  }
  if (Object.keys(endpoints).length === 0) return undefined;
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  if (!accessKeyId || !secretAccessKey) {
    const given = Object.keys(endpoints).map((s) => ENDPOINT_VARIABLES[s as ExternalService]);
    throw new SettingError(`${given.join(', ')}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY too, the key to sign with at the existing endpoints.`);
  }
  return { endpoints, credentials: { accessKeyId, secretAccessKey } };
}

function endpointUrl(name: string, raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.pathname.replace(/\/+$/, '') !== '' || url.search) {
    throw new SettingError(`${name}: expected an http(s) URL with no path, e.g. http://127.0.0.1:8000, got ${JSON.stringify(raw)}.`);
  }
  return url.origin;
}
