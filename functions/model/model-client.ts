import type Anthropic from '@anthropic-ai/sdk';

/**
 * What the harness uses of a Messages API client. Both `Anthropic` and `AnthropicBedrock`
 * (functions/handlers/model-client.ts) fit; Bedrock has no token-counting endpoint, so
 * `countTokens` is optional and its callers fall back to the estimate.
 */
export interface ModelClient {
  messages: Pick<Anthropic['messages'], 'create'> & Partial<Pick<Anthropic['messages'], 'countTokens'>>;
}
