/**
 * What a cached environment layer holds and what it is keyed by (docs/workspaces.md, "The cached
 * environment"). One copy for the runner, which applies the rules to its tree, and the harness,
 * which states them.
 */

/** The most bytes of file content one layer holds unless STRATUS_ENVIRONMENT_MAX_BYTES says otherwise. */
export const DEFAULT_ENVIRONMENT_MAX_BYTES = 2 * 1024 ** 3;

/**
 * Directories that hold installed dependencies or build output. In a session with an
 * environment, such a directory, at any depth, belongs to the layer instead of the workspace
 * when the workspace's published version does not already contain it: a repository that commits
 * its `vendor/` keeps it as workspace content.
 */
export const LAYER_DIRECTORY_NAMES: ReadonlySet<string> = new Set([
  'node_modules', // npm, pnpm, yarn, bun
  'bower_components',
  '.pnpm-store',
  '.yarn-cache',
  '.venv', // Python virtualenvs (uv, poetry with in-project venvs, python -m venv .venv)
  'venv',
  '__pypackages__', // PDM
  '.tox',
  'vendor', // Go (go mod vendor), PHP (composer), Ruby (bundle --path vendor/bundle)
  '.bundle',
  'target', // Cargo, Maven
  '.gradle',
]);

/** Whether a directory named `name` is a dependency directory (LAYER_DIRECTORY_NAMES). */
export function isLayerDirectoryName(name: string): boolean {
  return LAYER_DIRECTORY_NAMES.has(name);
}

/** Files whose content decides what the set-up installs: their hashes are part of the fingerprint. */
const LOCKFILE_NAMES: ReadonlySet<string> = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lock',
  'bun.lockb',
  'poetry.lock',
  'Pipfile.lock',
  'uv.lock',
  'pdm.lock',
  'Cargo.lock',
  'go.sum',
  'go.mod',
  'Gemfile.lock',
  'composer.lock',
  'mix.lock',
  'pubspec.lock',
  'Package.resolved',
  'packages.lock.json',
  'gradle.lockfile',
  '.nvmrc',
  '.node-version',
  '.python-version',
  '.ruby-version',
  '.tool-versions',
  'rust-toolchain',
  'rust-toolchain.toml',
]);

/** Whether a workspace path is a lockfile (LOCKFILE_NAMES or `requirements*.txt`), outside any dependency directory. */
export function isLockfilePath(path: string): boolean {
  const parts = path.split('/');
  const name = parts[parts.length - 1]!;
  if (parts.slice(0, -1).some(isLayerDirectoryName)) return false;
  return LOCKFILE_NAMES.has(name) || /^requirements.*\.txt$/.test(name);
}
