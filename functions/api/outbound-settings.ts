import type { McpServers } from '../session-settings/mcp-config.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { UserError } from '../shared/errors.ts';

/** What of a session's (or a repository's) settings makes the API side call out, or widens the sandbox's reach. */
export interface OutboundSettings {
  allowedDomains?: readonly string[];
  mcpServers?: McpServers;
  hooks?: readonly { url: string }[];
  /** Hosts added to the set-up steps' registries: the same sandbox proxies enforce them. */
  setup?: { registries?: { add?: readonly string[] } };
}

/**
 * 400 `outbound_refused` when the settings name something the outbound policy will never call
 * (a hook or MCP URL at a non-public address the operator does not allow, plain http:// to a
 * host it does not name, one of the stack's own endpoints), or list in `allowedDomains` a
 * non-public IP literal the operator does not allow (the sandbox's proxies honour listed
 * addresses). Names are checked again when called, after resolving them.
 */
export function assertOutboundSettings(policy: OutboundPolicy, settings: OutboundSettings | undefined): void {
  const domains = policy.allowedDomainsRefusals(settings?.allowedDomains ?? []);
  if (domains.length > 0) throw new UserError(`Invalid "settings.allowedDomains": ${domains.join('; ')}.`, 'outbound_refused');
  const registries = policy.allowedDomainsRefusals(settings?.setup?.registries?.add ?? []);
  if (registries.length > 0) throw new UserError(`Invalid "settings.setup.registries.add": ${registries.join('; ')}.`, 'outbound_refused');
  const servers = Object.entries(settings?.mcpServers ?? {}).flatMap(([name, config]) => {
    const reason = policy.refusalOf(config.url);
    return reason ? [`"${name}" (${reason})`] : [];
  });
  if (servers.length > 0) throw new UserError(`Invalid "settings.mcpServers": the API would never call ${servers.join(', ')}.`, 'outbound_refused');
  const hooks = (settings?.hooks ?? []).flatMap((hook, i) => {
    const reason = policy.refusalOf(hook.url);
    return reason ? [`"settings.hooks[${i}].url" (${reason})`] : [];
  });
  if (hooks.length > 0) throw new UserError(`Invalid hooks: the API would never call ${hooks.join(', ')}.`, 'outbound_refused');
}
