import type { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import type { ClientOptions } from '@anthropic-ai/sdk/client';
import type { Messages } from '@anthropic-ai/sdk/resources/messages';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { StratusConfig } from '../deps/config.ts';
import type { ModelClient } from '../model/model-client.ts';

/**
 * The Messages client for the configured provider. SDK retries are off (maxRetries 0): the
 * model-call layer retries, with its own backoff, fallback and tombstones, the same way for both.
 *
 * Bedrock signs with SigV4: in AWS with the function's role through the SDK's standard
 * credential chain (the one every AWS client here uses), against the stand-in at
 * `endpoints.bedrock` with the local stack's static credentials. `apiKey: null` keeps a Bedrock
 * API key in the environment (AWS_BEARER_TOKEN_BEDROCK) from replacing the role.
 */
export function createModelClient(config: Pick<StratusConfig, 'model' | 'region' | 'endpoints' | 'localCredentials'>): ModelClient {
  if (config.model.provider === 'anthropic') {
    // Loaded on the first call as well: a cold start that serves no turn never compiles the SDK.
    let anthropic: Promise<Messages> | undefined;
    const messages = () => (anthropic ??= createAnthropicMessages({ apiKey: config.model.apiKey, baseURL: config.model.baseURL, maxRetries: 0 }));
    const create = async (...args: Parameters<Messages['create']>) => (await messages()).create(...args);
    const countTokens = async (...args: Parameters<Messages['countTokens']>) => (await messages()).countTokens(...args);
    return {
      messages: {
        create: create as unknown as ModelClient['messages']['create'],
        countTokens: countTokens as unknown as NonNullable<ModelClient['messages']['countTokens']>,
      },
    };
  }
  // Loaded on the first call: a deployment on the Anthropic API never evaluates the Bedrock SDK.
  let bedrock: Promise<AnthropicBedrock> | undefined;
  const client = () => (bedrock ??= createBedrockClient(config));
  const create = async (...args: Parameters<AnthropicBedrock['messages']['create']>) => (await client()).messages.create(...args);
  return { messages: { create: create as unknown as ModelClient['messages']['create'] } };
}

/**
 * The SDK's own client with only the Messages resource. The default export (`Anthropic`) also
 * builds every other resource (beta, files, skills, organization, ...), ~320 KB of minified
 * code the harness never calls. Requests, retries-off, headers and errors are BaseAnthropic's,
 * unchanged. BaseAnthropic still maps error codes to the error classes of every resource module,
 * which brings ~330 KB along, hence the lazy import (docs/deploy.md, "Cold start and bundle size").
 */
async function createAnthropicMessages(options: ClientOptions): Promise<Messages> {
  const [{ BaseAnthropic }, { Messages }] = await Promise.all([import('@anthropic-ai/sdk/client'), import('@anthropic-ai/sdk/resources/messages')]);
  class MessagesClient extends BaseAnthropic {
    readonly messages = new Messages(this);
  }
  return new MessagesClient({ ...options, fetch: fetchWithBytesBody }).messages;
}

/**
 * The platform fetch, handed a string body as bytes. Given a string, undici first checks every
 * character for lone surrogates and then encodes it through a web stream: about a millisecond a
 * request at a long session's few hundred KB of JSON, in the turn's own process. Encoding it here
 * is one native copy (lone surrogates become U+FFFD either way).
 */
const fetchWithBytesBody: typeof fetch = (input, init) => fetch(input, typeof init?.body === 'string' ? { ...init, body: Buffer.from(init.body) } : init);

async function createBedrockClient(config: Pick<StratusConfig, 'region' | 'endpoints' | 'localCredentials'>): Promise<AnthropicBedrock> {
  const { AnthropicBedrock } = await import('@anthropic-ai/bedrock-sdk');
  const standIn = config.endpoints.bedrock;
  const local = standIn ? config.localCredentials : undefined;
  const common = {
    awsRegion: config.region,
    baseURL: standIn ?? `https://bedrock-runtime.${config.region}.amazonaws.com`,
    apiKey: null,
    maxRetries: 0,
  };
  if (local) return new AnthropicBedrock({ ...common, awsAccessKey: local.accessKeyId, awsSecretKey: local.secretAccessKey });
  // One memoized provider: credentials are fetched once and refreshed before they expire.
  const credentials = defaultProvider();
  return new AnthropicBedrock({ ...common, providerChainResolver: async () => credentials });
}
