/**
 * The package registries and source hosts set-up steps reach by default: enough for `npm ci`,
 * `pip install`, `cargo fetch`, `go mod download`, Maven, Bundler, `apt-get` and GitHub tarballs,
 * nothing else. Only set-up steps get them; the agent's own commands reach only what the session
 * allows (`allowedDomains`). The operator replaces the list with STRATUS_SETUP_REGISTRIES, a
 * repository or session adds and removes entries with its `setup.registries` setting
 * (docs/environments.md).
 */
export const DEFAULT_SETUP_REGISTRIES: readonly string[] = [
  // npm and Yarn
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  // PyPI
  'pypi.org',
  'files.pythonhosted.org',
  // crates.io
  'crates.io',
  'static.crates.io',
  'index.crates.io',
  // the Go module proxy and checksum database
  'proxy.golang.org',
  'sum.golang.org',
  // Maven Central
  'repo1.maven.org',
  'repo.maven.apache.org',
  // RubyGems
  'rubygems.org',
  'index.rubygems.org',
  // Debian and Ubuntu archives
  'deb.debian.org',
  'security.debian.org',
  'archive.ubuntu.com',
  'security.ubuntu.com',
  // GitHub's source archives and release assets (not its API or git: the token never reaches a sandbox)
  'codeload.github.com',
  'objects.githubusercontent.com',
];

export const SETUP_REGISTRIES_SETTING = 'STRATUS_SETUP_REGISTRIES';

/** How a repository or a session changes the registries its set-up reaches. */
export interface RegistryTuning {
  add?: readonly string[];
  remove?: readonly string[];
}

/**
 * The hosts a session's set-up steps may reach: the operator's registries with the session's
 * (or its repository's) removals taken out and additions put in, then the session's own
 * `allowedDomains` (what the agent may reach, set-up may too). Entries compare case-insensitively;
 * each appears once, in that order.
 */
export function setupAllowList(registries: readonly string[], tuning: RegistryTuning | undefined, sessionAllowed: readonly string[] | undefined): string[] {
  const removed = new Set((tuning?.remove ?? []).map(normal));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of [...registries.filter((e) => !removed.has(normal(e))), ...(tuning?.add ?? []), ...(sessionAllowed ?? [])]) {
    const key = normal(entry);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(entry.trim());
  }
  return out;
}

function normal(entry: string): string {
  return entry.trim().toLowerCase().replace(/\.$/, '');
}
