import { describe, expect, it } from 'vitest';
import { DEFAULT_SETUP_REGISTRIES, setupAllowList } from '../../../functions/session-settings/setup-registries.ts';
import { parseAllowListEntry } from '../../../sandbox-runner/common/network-allow-list.ts';

describe("the set-up steps' allow-list", () => {
  it("is the registries, tuned by the setting, then the session's own hosts, each once", () => {
    const list = setupAllowList(
      ['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org'],
      { remove: ['PyPI.org.', 'files.pythonhosted.org'], add: ['npm.internal.example:8443', 'registry.npmjs.org'] },
      ['api.example.com', 'REGISTRY.npmjs.org'],
    );
    expect(list).toEqual(['registry.npmjs.org', 'npm.internal.example:8443', 'api.example.com']);
  });

  it("without a setting is the registries plus the session's list", () => {
    expect(setupAllowList(DEFAULT_SETUP_REGISTRIES, undefined, undefined)).toEqual([...DEFAULT_SETUP_REGISTRIES]);
    expect(setupAllowList([], undefined, ['example.com'])).toEqual(['example.com']);
  });

  it('names only hosts the sandbox proxies understand, and no GitHub API or git host (the token never reaches a sandbox)', () => {
    for (const entry of DEFAULT_SETUP_REGISTRIES) expect(parseAllowListEntry(entry), entry).toBeDefined();
    expect(DEFAULT_SETUP_REGISTRIES).not.toContain('github.com');
    expect(DEFAULT_SETUP_REGISTRIES).not.toContain('api.github.com');
  });
});
