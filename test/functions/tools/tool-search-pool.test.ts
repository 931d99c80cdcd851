import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { rulesFromLists } from '../../../functions/permissions/rule-syntax.ts';
import { createExternalTool } from '../../../functions/tools/external-tool.ts';
import { assembleToolPool } from '../../../functions/tools/registry.ts';
import { buildTool } from '../../../functions/tools/tool.ts';
import { autoThresholdChars, type ToolSearchSettings } from '../../../functions/tools/tool-search/tool-search-mode.ts';
import { withoutToolReferences } from '../../../functions/tools/tool-search/discovered-tools.ts';
import { instantTool } from '../../support/fake-tools.ts';

const ext = (name: string, description = `${name} from a server`, alwaysLoad = false) =>
  createExternalTool({ name, description, inputJSONSchema: { type: 'object', properties: { q: { type: 'string' } } }, alwaysLoad, call: async () => 'ok' });
const settings = (mode: ToolSearchSettings['mode'], extra: Partial<ToolSearchSettings> = {}): ToolSearchSettings => ({
  mode,
  model: 'claude-sonnet-5-5',
  contextWindow: 200_000,
  ...extra,
});
const names = (tools: { name: string }[]) => tools.map((t) => t.name);
const found = (...tools: string[]): MessageParam[] => [
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: tools.map((tool_name) => ({ type: 'tool_reference' as const, tool_name })) }] },
];

describe('the pool with ToolSearch', () => {
  const builtins = [instantTool('Read'), instantTool('Bash'), buildTool({ ...instantTool('Notebook'), shouldDefer: true })];
  const external = [ext('mcp__b__x'), ext('mcp__a__y'), ext('mcp__a__pinned', 'always here', true)];

  it('in `tst`: ToolSearch joins the built-ins, deferred tools (MCP, shouldDefer) wait, alwaysLoad tools do not', () => {
    const pool = assembleToolPool({ builtins, external, toolSearch: settings('tst') });
    expect(names(pool.toApiTools())).toEqual(['Bash', 'Read', 'ToolSearch', 'mcp__a__pinned']);
    expect(pool.deferredToolsMessage).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '<available-deferred-tools>\nNotebook\nmcp__a__y\nmcp__b__x\n</available-deferred-tools>' }],
    });
    // Still callable: a call finds them.
    expect(pool.find('mcp__b__x')?.name).toBe('mcp__b__x');
  });

  it('adds found tools after the rest, marked defer_loading, in pool order whatever the order they were found in', () => {
    const pool = assembleToolPool({ builtins, external, toolSearch: settings('tst') });
    const before = JSON.stringify(pool.toApiTools());
    const api = pool.toApiTools(found('mcp__b__x', 'Notebook'));
    expect(names(api)).toEqual(['Bash', 'Read', 'ToolSearch', 'mcp__a__pinned', 'Notebook', 'mcp__b__x']);
    expect(api.slice(4).every((t) => (t as { defer_loading?: boolean }).defer_loading === true)).toBe(true);
    // The prefix stays byte for byte; the same discoveries give the same array.
    expect(JSON.stringify(api.slice(0, 4))).toBe(before.slice(0, -1).concat(']'));
    expect(pool.toApiTools(found('Notebook', 'mcp__b__x'))).toBe(api);
  });

  it('in `standard`, with no deferred tools, or for a Haiku model: every tool, no ToolSearch, no list message', () => {
    for (const pool of [
      assembleToolPool({ builtins, external, toolSearch: settings('standard') }),
      assembleToolPool({ builtins: [instantTool('Read')], external: [ext('mcp__a__pinned', 'x', true)], toolSearch: settings('tst') }),
      assembleToolPool({ builtins, external, toolSearch: settings('tst', { model: 'claude-haiku-4-5' }) }),
      assembleToolPool({ builtins, external, toolSearch: settings('tst'), rules: rulesFromLists({ deny: ['ToolSearch'] }, 'policy').rules }),
    ]) {
      expect(names(pool.toApiTools())).not.toContain('ToolSearch');
      expect(pool.deferredToolsMessage).toBeUndefined();
    }
  });

  it('in `tst-auto`: defers only when the deferred schemas reach a tenth of the window (2.5 characters a token)', () => {
    expect(autoThresholdChars(200_000)).toBe(50_000);
    const long = [ext('mcp__big__a', 'd'.repeat(30_000)), ext('mcp__big__b', 'd'.repeat(30_000))];
    expect(names(assembleToolPool({ builtins, external: long, toolSearch: settings('tst-auto') }).toApiTools())).toContain('ToolSearch');
    expect(names(assembleToolPool({ builtins, external: long, toolSearch: settings('tst-auto', { contextWindow: 1_000_000 }) }).toApiTools())).not.toContain(
      'ToolSearch',
    );
  });

  it('takes tool references out of requests that defer nothing, leaving a note where nothing else was', () => {
    const messages: MessageParam[] = [
      ...found('mcp__a__y'),
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'y',
            content: [
              { type: 'text', text: 'kept' },
              { type: 'tool_reference', tool_name: 'z' },
            ],
          },
        ],
      },
    ];
    expect(withoutToolReferences(messages)).toEqual([
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'x', content: [{ type: 'text', text: '[Tool references removed - tool search not enabled]' }] }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'y', content: [{ type: 'text', text: 'kept' }] }] },
    ]);
  });
});
