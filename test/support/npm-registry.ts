import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { runServer } from 'verdaccio';

/**
 * A real npm registry on loopback (verdaccio) for set-up step tests: storage in a temp dir, no
 * uplinks (it proxies nothing; a package it was not given is a 404), web UI off. Packages are
 * published by the test itself with the real npm CLI. `requests` counts what reached it, so a
 * test can tell an install that went to the registry from one that did not.
 */
export interface NpmRegistry {
  url: string;
  /** `127.0.0.1:PORT`: the registry as an allow-list entry. */
  host: string;
  /** Request paths that reached the registry, in order. */
  requests: string[];
  /** Publishes a package from files (run with the async CLI: the registry answers from this process). */
  publish(manifest: { name: string; version: string; [key: string]: unknown }, files: Record<string, string>): Promise<void>;
  /** An `.npmrc` line set that points npm at this registry (for a repository fixture). */
  npmrc(): string;
  close(): Promise<void>;
}

export async function startNpmRegistry(dir: string): Promise<NpmRegistry> {
  mkdirSync(path.join(dir, 'storage'), { recursive: true });
  const configPath = path.join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    [
      `storage: ${path.join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${path.join(dir, 'htpasswd')}`,
      '    max_users: 10',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: json, level: fatal }',
      '',
    ].join('\n'),
  );
  const server = (await runServer(configPath)) as Server;
  const requests: string[] = [];
  server.prependListener('request', (req) => requests.push(`${req.method} ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const token = await addUser(url);
  const userconfig = path.join(dir, 'publisher.npmrc');
  writeFileSync(userconfig, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  let counter = 0;
  return {
    url,
    host: `127.0.0.1:${port}`,
    requests,
    async publish(manifest, files) {
      const pkgDir = path.join(dir, 'packages', `${++counter}`);
      mkdirSync(pkgDir, { recursive: true });
      writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify(manifest, null, 2));
      for (const [name, text] of Object.entries(files)) writeFileSync(path.join(pkgDir, name), text);
      await promisify(execFile)('npm', ['publish', '--registry', `${url}/`, '--userconfig', userconfig], { cwd: pkgDir, env: npmEnv(dir) });
    },
    npmrc: () => `registry=${url}/\naudit=false\nfund=false\nupdate-notifier=false\n`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A user made through the registry's own login API (what `npm adduser` calls); its token publishes. */
async function addUser(url: string): Promise<string> {
  const res = await fetch(`${url}/-/user/org.couchdb.user:publisher`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'publisher', password: 'publisher-password', type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const body = (await res.json()) as { token?: string };
  if (!res.ok || !body.token) throw new Error(`verdaccio did not make the publisher: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** npm's own environment for the test's calls: its cache in the temp dir, nothing from the host's npm config. */
export function npmEnv(dir: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: dir, npm_config_cache: path.join(dir, 'npm-cache'), npm_config_update_notifier: 'false' };
}
