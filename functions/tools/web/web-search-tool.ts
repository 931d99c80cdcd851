import type { ContentBlock, WebSearchTool20250305 } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { buildTool, ToolError } from '../tool.ts';

export const WEB_SEARCH_TOOL_NAME = 'WebSearch';
/** Searches one WebSearch call may make (the server tool's `max_uses`). */
export const MAX_SEARCHES_PER_CALL = 8;

const inputSchema = z.strictObject({
  query: z.string().min(2).describe('The search query to use'),
  allowed_domains: z.array(z.string()).optional().describe('Only include search results from these domains'),
  blocked_domains: z.array(z.string()).optional().describe('Never include search results from these domains'),
});

type Input = z.infer<typeof inputSchema>;

/** One search's hits, or the model's words between searches, in the order they came. */
export type SearchResult = { tool_use_id: string; content: { title: string; url: string }[] } | string;

export interface WebSearchOutput {
  query: string;
  results: SearchResult[];
  durationSeconds: number;
}

const DESCRIPTION = [
  'Searches the web and returns the results: titles and URLs of the pages found, with a short account of what they say.',
  '- Use it for anything past your training data or that changes: current versions, releases, documentation, news.',
  '- `allowed_domains` keeps only results from those domains, `blocked_domains` drops theirs (not both at once).',
  '- Cite what you use: after answering, list the sources as Markdown links ([Title](URL)).',
  '- When you search for recent information, put the current year (from the date you were given) in the query.',
].join('\n');

const SEARCH_SYSTEM = 'You run web searches for another assistant: search for what it asks, then sum up what the results say.';

function searchServerTool(input: Input): WebSearchTool20250305 {
  return {
    type: 'web_search_20250305',
    name: 'web_search',
    max_uses: MAX_SEARCHES_PER_CALL,
    ...(input.allowed_domains ? { allowed_domains: input.allowed_domains } : {}),
    ...(input.blocked_domains ? { blocked_domains: input.blocked_domains } : {}),
  };
}

/**
 * The response's blocks as the result lists them: the text before a search as one entry, each
 * search's hits as `{tool_use_id, content}` (a failed search as `Web search error: CODE`), and
 * the text after the last search as one entry.
 */
export function searchResults(blocks: readonly ContentBlock[]): SearchResult[] {
  const results: SearchResult[] = [];
  let text = '';
  let collecting = true;
  for (const block of blocks) {
    if (block.type === 'server_tool_use') {
      if (collecting) {
        collecting = false;
        if (text.trim().length > 0) results.push(text.trim());
        text = '';
      }
    } else if (block.type === 'web_search_tool_result') {
      const content = block.content;
      if (!Array.isArray(content)) results.push(`Web search error: ${content.error_code}`);
      else results.push({ tool_use_id: block.tool_use_id, content: content.map((hit) => ({ title: hit.title, url: hit.url })) });
    } else if (block.type === 'text') {
      if (collecting) text += block.text;
      else {
        collecting = true;
        text = block.text;
      }
    }
  }
  if (text.length > 0) results.push(text.trim());
  return results;
}

/** The result text (as the reference words it): each entry, hits as JSON, and the reminder to cite. */
export function searchResultText(output: WebSearchOutput): string {
  let text = `Web search results for query: "${output.query}"\n\n`;
  for (const entry of output.results) {
    if (typeof entry === 'string') text += `${entry}\n\n`;
    else if (entry.content.length > 0) text += `Links: ${JSON.stringify(entry.content)}\n\n`;
    else text += 'No links found.\n\n';
  }
  text += '\nREMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks.';
  return text.trim();
}

export const webSearchTool = buildTool({
  name: WEB_SEARCH_TOOL_NAME,
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  searchHint: 'search the web for current information',
  isConcurrencySafe: () => true,
  async validateInput(input) {
    if (!input.query.length) return { ok: false, message: 'Error: Missing query' };
    if (input.allowed_domains?.length && input.blocked_domains?.length)
      return { ok: false, message: 'Error: Cannot specify both allowed_domains and blocked_domains in the same request' };
    return { ok: true };
  },
  async call(input, ctx) {
    if (!ctx.sideModel?.webSearch) throw new ToolError('Web search is not available in this Stratus deployment.');
    const startedAt = performance.now();
    const response = await ctx.sideModel.call(
      { system: SEARCH_SYSTEM, messages: [{ role: 'user', content: `Perform a web search for the query: ${input.query}` }], tools: [searchServerTool(input)] },
      ctx.signal,
    );
    return { data: { query: input.query, results: searchResults(response.content), durationSeconds: (performance.now() - startedAt) / 1000 } };
  },
  mapToolResultToToolResultBlockParam(output: WebSearchOutput, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: searchResultText(output) };
  },
});
