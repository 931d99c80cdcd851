import { matchCommandRules } from './command-rules.ts';
import { firstMatching } from './rule-matching.ts';
import type { CommandPart, CommandParts, PermissionRule, PermissionSubject } from './types.ts';

/** The rules that bear on one call, found once for the whole decision. */
export interface CallRules {
  deny?: { rule: PermissionRule; part?: CommandPart };
  ask?: { rule: PermissionRule; part?: CommandPart };
  /** A shell command whose deny and ask rules could not all be checked (see CommandRuleMatch). */
  unsure?: { why: 'unparsable' | 'unknown'; parts: CommandPart[] };
  allow?: PermissionRule;
  /** A shell command's parts that need approval when nothing else allows the call. */
  uncovered?: CommandPart[];
  /** The command has more than one part: messages say which part they mean. */
  compound?: boolean;
}

/**
 * Rules without content cover the whole tool, whatever the input. Rules with content look at the
 * call's main argument; for a shell tool (one that splits its command into parts) each part is
 * matched on its own (./command-rules.ts), so `echo hi && rm x` is not covered by `Bash(echo hi:*)`
 * and is denied by `Bash(rm:*)`.
 */
export async function rulesForCall<Ctx>(rules: readonly PermissionRule[], tool: PermissionSubject<Ctx>, input: unknown): Promise<CallRules> {
  const command = (input as { command?: unknown } | null)?.command;
  const split = tool.commandParts && typeof command === 'string' ? await splitSafely(tool.commandParts.bind(tool), input) : undefined;
  if (!split || typeof command !== 'string') {
    return {
      deny: wrap(firstMatching(rules, 'deny', tool.name, input)),
      ask: wrap(firstMatching(rules, 'ask', tool.name, input)),
      allow: firstMatching(rules, 'allow', tool.name, input),
    };
  }
  const own = rules.filter((r) => r.value.toolName === tool.name || r.value.content === undefined);
  const whole = own.filter((r) => r.value.content === undefined);
  const wholeDeny = firstMatching(whole, 'deny', tool.name, input);
  const wholeAsk = firstMatching(whole, 'ask', tool.name, input);
  const wholeAllow = firstMatching(whole, 'allow', tool.name, input);
  const match = matchCommandRules(
    command,
    split,
    own.filter((r) => r.value.toolName === tool.name && r.value.content !== undefined),
  );
  const compound = split.parsed && split.compound;
  return {
    deny: wholeDeny ? { rule: wholeDeny } : match.deny,
    ask: wholeAsk ? { rule: wholeAsk } : match.ask,
    unsure: match.unsure,
    allow: wholeAllow ?? match.allow,
    uncovered: wholeAllow ? [] : match.uncovered,
    compound,
  };
}

/** A split that fails (the grammar would not load) leaves the command unparsed: asked about, never allowed by a prefix. */
async function splitSafely(split: (input: unknown) => Promise<CommandParts | undefined>, input: unknown): Promise<CommandParts | undefined> {
  try {
    return await split(input);
  } catch (err) {
    return { parsed: false, reason: String(err) };
  }
}

function wrap(rule: PermissionRule | undefined): { rule: PermissionRule } | undefined {
  return rule ? { rule } : undefined;
}
