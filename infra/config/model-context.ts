import { DEFAULT_MODELS, MODEL_PROVIDERS, type ModelProvider } from '../../functions/model/model-names.ts';
import type { StageConfig } from './stages.ts';

/**
 * A stage's model with the CDK context values (`-c modelProvider=`, `-c model=`,
 * `-c fallbackModel=`) applied. Switching the provider without naming a model takes the new
 * provider's default: an Anthropic model name means nothing to Bedrock, and the reverse.
 */
export function withModelContext(model: StageConfig['model'], context: { provider?: string; name?: string; fallback?: string }): StageConfig['model'] {
  if (context.provider !== undefined && !MODEL_PROVIDERS.includes(context.provider as ModelProvider)) {
    throw new Error(`-c modelProvider must be one of ${MODEL_PROVIDERS.join(', ')}; got "${context.provider}".`);
  }
  const provider = (context.provider as ModelProvider | undefined) ?? model.provider;
  const switched = provider !== model.provider;
  const name = context.name || (switched ? DEFAULT_MODELS[provider] : model.name);
  const fallback = context.fallback || (switched ? undefined : model.fallback);
  return { provider, name, ...(fallback ? { fallback } : {}) };
}
