#!/usr/bin/env bash
# Installs what Stratus needs on this machine, idempotently and quickly when nothing is missing:
# npm packages (from the lockfile) and the system packages the sandbox runner uses: bubblewrap
# (isolation), git (clones), socat (relays an allow-listed command's proxy port into its sandbox);
# chromium for the console's browser tests; and the web console's static files.
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=false; [ "${1:-}" = "--quiet" ] && quiet=true
say() { $quiet || echo "setup: $*"; }

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# The web console's static files (served at /console, shipped beside the API bundle) are built
# when missing or older than their sources or the API types they use.
if [ ! -f dist/console/index.html ] || [ -n "$(find console cli/generated/api.d.ts package-lock.json -newer dist/console/index.html -print -quit)" ]; then
  say "building the web console"
  npm run --silent build:console
fi

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v socat >/dev/null 2>&1 || missing+=(socat)
# The tests reach allow-listed hosts from inside the sandbox with curl.
command -v curl >/dev/null 2>&1 || missing+=(curl)
# The console's browser tests drive Debian's Chromium (playwright-core, no downloaded browser).
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing system packages: ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  elif [ "${missing[*]}" = "chromium" ]; then
    # Only the console's browser tests need it: `npm start` goes on without it.
    echo "setup: chromium is missing; the console's browser tests need it (Debian/Ubuntu: sudo apt-get install chromium)." >&2
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: install them with your package manager (Debian/Ubuntu: sudo apt-get install ${missing[*]})." >&2
    echo "setup: the sandbox runner needs bubblewrap to isolate commands; it refuses to run them unisolated." >&2
    exit 1
  fi
fi
say "ok"
