import type { ModelProvider } from './model-names.ts';

/**
 * Whether sessions get WebSearch: the operator turned it on (STRATUS_WEB_SEARCH=on) and the
 * provider runs the web search server tool. Anthropic's Messages API does; Amazon Bedrock does
 * not offer it, so there the tool is never listed, whatever the setting says.
 */
export function webSearchOffered(model: { provider?: ModelProvider; webSearch?: boolean }): boolean {
  return model.webSearch === true && (model.provider ?? 'anthropic') === 'anthropic';
}
