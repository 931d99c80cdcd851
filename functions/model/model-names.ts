/**
 * The one place model names live. The local stack, `configFromEnv` and the CDK app's stages
 * all start from these; an operator changes the deployed model with a CDK context value
 * (`-c model=...`, docs/deploy.md), never with a code edit.
 */
export type ModelProvider = 'anthropic' | 'bedrock';

export const MODEL_PROVIDERS = ['anthropic', 'bedrock'] as const satisfies readonly ModelProvider[];

/**
 * The default model per provider. On Bedrock the name is a model id or an inference profile
 * id; Claude's current models are offered through cross-region inference profiles, and the
 * `global.` profile is available from every commercial region.
 */
export const DEFAULT_MODELS: Record<ModelProvider, string> = {
  anthropic: 'claude-sonnet-5-5',
  bedrock: 'global.anthropic.claude-sonnet-5-5',
};

/**
 * The name the local stack gives the bundled scripted model server (`npm start` without an API
 * key, `npm run demo:github`): the price table prices it at 0, and the message log says which
 * model answered.
 */
export const SCRIPTED_MODEL_NAME = 'stratus-scripted-model';
