import { z } from 'zod';
import { SCRIPTED_MODEL_NAME } from './model-names.ts';

/** Dollars per million tokens of each kind. */
export const modelPriceSchema = z.strictObject({
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
  /** Default: a tenth of the input price (Anthropic's cache-read rate). */
  cacheReadPerMTok: z.number().nonnegative().optional(),
  /** Default: 1.25 times the input price (Anthropic's 5-minute cache-write rate). */
  cacheWritePerMTok: z.number().nonnegative().optional(),
  /** Dollars per web search the provider runs (WebSearch's server tool). Default: WEB_SEARCH_USD_PER_SEARCH. */
  perWebSearch: z.number().nonnegative().optional(),
});

/** Anthropic's list price of its web search server tool: 10 USD per 1,000 searches (the tokens of its results are billed as input). */
export const WEB_SEARCH_USD_PER_SEARCH = 0.01;

export type ModelPrice = z.infer<typeof modelPriceSchema>;

/** Model-name prefix → price; the longest matching prefix wins. */
export type PriceTable = Record<string, ModelPrice>;

/**
 * Anthropic's list prices (USD per million tokens, anthropic.com/pricing, November 2026). The
 * family entries (`claude-opus`, ...) catch model names not listed; they take the family's
 * highest price so that a cost budget errs on the side of stopping early. The config
 * (`STRATUS_MODEL_PRICES`) adds or replaces entries.
 */
export const DEFAULT_PRICES: PriceTable = {
  'claude-opus-4-5': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-opus-4-1': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-sonnet': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-3-7-sonnet': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4 },
  'claude-haiku': { inputPerMTok: 1, outputPerMTok: 5 },
  // The bundled scripted model (npm start without a key) costs nothing.
  [SCRIPTED_MODEL_NAME]: { inputPerMTok: 0, outputPerMTok: 0, cacheReadPerMTok: 0, cacheWritePerMTok: 0, perWebSearch: 0 },
};

/** What no prefix matches is priced as the most expensive model listed (fail-closed for cost budgets). */
export function priceOf(table: PriceTable, model: string): ModelPrice {
  let best: [string, ModelPrice] | undefined;
  for (const entry of Object.entries(table)) {
    if (model.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  if (best) return best[1];
  return Object.values(table).reduce((max, p) => (p.outputPerMTok > max.outputPerMTok ? p : max), { inputPerMTok: 0, outputPerMTok: 0 });
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  /** Web searches the provider ran for the response (priced per search). */
  webSearchRequests?: number;
}

/**
 * Dollars rounded to the micro-dollar. Costs are rounded where they are written (each call's
 * cost and every running sum), so every view (API, events, stored runs, CLI, console) shows
 * `0.023235`, never the float noise of a sum (`0.023235000000000002`); half a micro-dollar per
 * call is far below what any budget or bill distinguishes.
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1_000_000) / 1_000_000;
}

/** The dollars one response's usage cost, to the micro-dollar. */
export function costUsd(table: PriceTable, model: string, usage: TokenUsage): number {
  const p = priceOf(table, model);
  const perToken = (perMTok: number) => perMTok / 1_000_000;
  return roundUsd(
    usage.inputTokens * perToken(p.inputPerMTok) +
      usage.outputTokens * perToken(p.outputPerMTok) +
      (usage.cacheReadInputTokens ?? 0) * perToken(p.cacheReadPerMTok ?? p.inputPerMTok * 0.1) +
      (usage.cacheCreationInputTokens ?? 0) * perToken(p.cacheWritePerMTok ?? p.inputPerMTok * 1.25) +
      (usage.webSearchRequests ?? 0) * (p.perWebSearch ?? WEB_SEARCH_USD_PER_SEARCH),
  );
}
