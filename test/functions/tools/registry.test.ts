import { describe, expect, it } from 'vitest';
import { rulesFromLists } from '../../../functions/permissions/rule-syntax.ts';
import { createExternalTool } from '../../../functions/tools/external-tool.ts';
import { assembleToolPool, BUILTIN_TOOLS } from '../../../functions/tools/registry.ts';
import { buildTool } from '../../../functions/tools/tool.ts';
import { instantTool } from '../../support/fake-tools.ts';

const ext = (name: string, schema: Record<string, unknown> = { type: 'object', properties: { q: { type: 'string' } } }) =>
  createExternalTool({ name, description: `${name} from a server`, inputJSONSchema: schema, call: async () => 'ok' });

describe('assembleToolPool', () => {
  it('puts built-ins sorted by name first, then external tools sorted by name', () => {
    const pool = assembleToolPool({
      builtins: [instantTool('Zed'), instantTool('Alpha'), instantTool('Mid')],
      external: [ext('mcp__b__x'), ext('mcp__a__y')],
    });
    expect(pool.tools.map((t) => t.name)).toEqual(['Alpha', 'Mid', 'Zed', 'mcp__a__y', 'mcp__b__x']);
  });

  it('keeps the built-in when an external tool has the same name', () => {
    const builtin = instantTool('Read');
    const pool = assembleToolPool({ builtins: [builtin], external: [ext('Read')] });
    expect(pool.tools).toHaveLength(1);
    expect(pool.find('Read')).toBe(builtin);
  });

  it('removes tools a deny rule names entirely, including a whole MCP server, before the model sees them', () => {
    const rules = rulesFromLists({ deny: ['Mid', 'mcp__b', 'Alpha(rm:*)'] }, 'policy').rules;
    const pool = assembleToolPool({ builtins: [instantTool('Alpha'), instantTool('Mid')], external: [ext('mcp__b__x'), ext('mcp__a__y')], rules });
    // A deny rule with content only refuses some calls: the tool stays.
    expect(pool.toApiTools().map((t) => t.name)).toEqual(['Alpha', 'mcp__a__y']);
  });

  it('leaves out tools that are not enabled (or whose isEnabled throws)', () => {
    const off = buildTool({ ...instantTool('Off'), isEnabled: () => false });
    const broken = buildTool({
      ...instantTool('Broken'),
      isEnabled: () => {
        throw new Error('x');
      },
    });
    expect(assembleToolPool({ builtins: [off, broken, instantTool('On')] }).tools.map((t) => t.name)).toEqual(['On']);
  });

  it('finds tools by alias', () => {
    const tool = buildTool({ ...instantTool('Current'), aliases: ['Old'] });
    expect(assembleToolPool({ builtins: [tool] }).find('Old')).toBe(tool);
  });

  it("sends the external tool's JSON schema to the model unchanged", () => {
    const schema = { type: 'object', properties: { q: { type: 'string', description: 'query' } }, required: ['q'] };
    expect(assembleToolPool({ builtins: [], external: [ext('mcp__s__t', schema)] }).toApiTools()).toEqual([
      { name: 'mcp__s__t', description: 'mcp__s__t from a server', input_schema: schema },
    ]);
  });

  it('sends byte-identical tools from turn to turn, and keeps the built-in prefix when external tools change', () => {
    const first = JSON.stringify(assembleToolPool({ builtins: BUILTIN_TOOLS, external: [ext('mcp__a__y')] }).toApiTools());
    const second = JSON.stringify(assembleToolPool({ builtins: [...BUILTIN_TOOLS].reverse(), external: [ext('mcp__a__y')] }).toApiTools());
    expect(second).toBe(first);
    const builtinsOnly = JSON.stringify(assembleToolPool({ builtins: BUILTIN_TOOLS }).toApiTools());
    const withMore = JSON.stringify(assembleToolPool({ builtins: BUILTIN_TOOLS, external: [ext('mcp__0__first'), ext('mcp__z__last')] }).toApiTools());
    expect(withMore.startsWith(builtinsOnly.slice(0, -1))).toBe(true);
  });
});
