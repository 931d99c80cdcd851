import { callModel } from '../model/model-call.ts';
import type { AssistantResponse } from '../model/model-stream.ts';
import { webSearchOffered } from '../model/web-search-offer.ts';
import type { SideModel } from '../tools/tool.ts';
import type { TurnDeps } from './turn-deps.ts';

/**
 * The model requests tools make (WebFetch's page reader, WebSearch's search) on the session's
 * model client, with the model call's retries and fallback, no tools of the agent and no
 * prompt-cache breakpoints (each request is made once). `count` puts each answer's usage and
 * cost into the session's totals (and so its budgets) before the tool answers.
 */
export function createSideModel(deps: Pick<TurnDeps, 'model' | 'config'>, count: (response: AssistantResponse) => Promise<unknown>): SideModel {
  const { model } = deps.config;
  return {
    webSearch: webSearchOffered(model),
    async call(request, signal) {
      let response: AssistantResponse | undefined;
      const events = callModel({
        client: deps.model,
        request: {
          model: model.name,
          max_tokens: model.maxTokens,
          messages: request.messages,
          ...(request.system !== undefined ? { system: request.system } : {}),
          ...(request.tools ? { tools: request.tools } : {}),
        },
        signal,
        maxRetries: model.maxRetries,
        baseDelayMs: model.retryBaseDelayMs,
        ...(model.fallbackName ? { fallbackModel: model.fallbackName } : {}),
        cache: false,
      });
      for await (const event of events) if (event.type === 'message') response = event.response;
      if (!response) throw new Error('The model gave no answer.');
      await count(response);
      return response;
    },
  };
}
