import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { restoreCachedEnvironment, saveCachedEnvironment } from '../../../functions/environments/environment-layer.ts';
import type { EnvironmentScope } from '../../../functions/environments/environment-scope.ts';
import { WorkspaceSession } from '../../../functions/runner-client/workspace-session.ts';
import { apiClient } from '../../support/api-client.ts';
import { unscripted, useLocalStack } from '../../support/stack-fixture.ts';

const REPOSITORY = { owner: 'Octo', name: 'App' };
const FILES = { 'package.json': '{"name":"app"}', 'package-lock.json': '{"lockfileVersion":3}' };
const INSTALL = 'mkdir -p node_modules/dep && echo "installed $RANDOM" > node_modules/dep/index.js';

/** The layer's harness side on the local stack: fingerprints, tenant-scoped keys, restore, save and the drop of stale layers. */
describe('restoreCachedEnvironment / saveCachedEnvironment', () => {
  const fx = useLocalStack({ brain: unscripted });
  let other: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const admin = apiClient(fx.stack.apiUrl, readFileSync(path.join(fx.dataDir, 'admin-token'), 'utf8').trim());
    other = apiClient(fx.stack.apiUrl, (await admin.request('POST', '/v1/admin/tokens', { tenantId: 'other', label: 'layers' })).json.token);
  });

  /** A new session of `tenant` with `files`, its workspace as the set-up steps would hold it, and its scope. */
  async function session(tenant: 'local' | 'other', files: Record<string, string> = FILES) {
    const created = await (tenant === 'local' ? fx.api : other).request('POST', '/v1/sessions', { files });
    expect(created.status).toBe(201);
    const record = (await fx.stack.deps.sessions.get(created.json.id))!;
    const workspace = new WorkspaceSession({ deps: fx.stack.deps, sessionId: record.sessionId, workspace: record.workspace, cwd: '/workspace' });
    const scope: EnvironmentScope = {
      tenantId: tenant,
      sessionId: record.sessionId,
      workspaceId: record.workspace.id,
      repository: REPOSITORY,
      setupScript: 'npm ci',
      setupSource: 'repository_file',
    };
    return { workspace, scope, sessionId: record.sessionId };
  }
  const sh = async (ws: WorkspaceSession, command: string) => (await ws.run({ type: 'bash', command, timeoutMs: 20_000 })).output;
  async function layerKeys(): Promise<string[]> {
    const s3 = await fx.stack.deps.workspaceStorage({ ...fx.stack.deps.config.localCredentials! });
    const out = await s3.send(new ListObjectsV2Command({ Bucket: fx.stack.deps.config.bucket, Prefix: 'environments/' }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  }

  it("restores a tenant's layer for its next session of the repository, never another tenant's, and drops the old fingerprint's layer", async () => {
    const first = await session('local');
    const cold = await restoreCachedEnvironment(fx.stack.deps, first.scope, first.workspace);
    expect(cold).toMatchObject({ restored: false, layer: { status: 'absent' } });
    if (!('environment' in cold)) throw new Error('expected an environment');
    expect(cold.environment.key).toMatch(/^environments\/local\/github\/octo\/app\/[0-9a-f]{64}\.tar\.gz$/);
    expect((await fx.stack.deps.sessions.get(first.sessionId))!.environment).toEqual(cold.environment);
    await sh(first.workspace, INSTALL);
    const installed = await sh(first.workspace, 'cat node_modules/dep/index.js');
    expect(await saveCachedEnvironment(fx.stack.deps, first.scope, first.workspace)).toMatchObject({ saved: true, roots: ['node_modules'] });

    const second = await session('local');
    expect(await restoreCachedEnvironment(fx.stack.deps, second.scope, second.workspace)).toMatchObject({ restored: true, environment: cold.environment });
    expect(await sh(second.workspace, 'cat node_modules/dep/index.js')).toBe(installed);

    // The same repository, set-up and lockfiles in another tenant: its own key, nothing to restore.
    const foreign = await session('other');
    const theirs = await restoreCachedEnvironment(fx.stack.deps, foreign.scope, foreign.workspace);
    expect(theirs).toMatchObject({ restored: false, layer: { status: 'absent' } });
    if (!('environment' in theirs)) throw new Error('expected an environment');
    expect(theirs.environment.fingerprint).toBe(cold.environment.fingerprint);
    expect(theirs.environment.key).toMatch(/^environments\/other\/github\/octo\/app\//);
    expect(await sh(foreign.workspace, 'ls node_modules 2>&1 || true')).toContain('No such file or directory');
    await sh(foreign.workspace, INSTALL);
    await saveCachedEnvironment(fx.stack.deps, foreign.scope, foreign.workspace);

    // A changed lockfile is another fingerprint: the set-up runs again, and storing its layer drops the old one (this tenant's only).
    const bumped = await session('local', { ...FILES, 'package-lock.json': '{"lockfileVersion":3,"bumped":true}' });
    const fresh = await restoreCachedEnvironment(fx.stack.deps, bumped.scope, bumped.workspace);
    expect(fresh).toMatchObject({ restored: false, layer: { status: 'absent' } });
    if (!('environment' in fresh)) throw new Error('expected an environment');
    expect(fresh.environment.fingerprint).not.toBe(cold.environment.fingerprint);
    await sh(bumped.workspace, INSTALL);
    await saveCachedEnvironment(fx.stack.deps, bumped.scope, bumped.workspace);
    expect(await layerKeys()).toEqual([fresh.environment.key, theirs.environment.key].sort());
  }, 120_000);

  it('caches nothing for a session without a repository', async () => {
    const plain = await session('local');
    const { repository: _, ...scope } = plain.scope;
    expect(await restoreCachedEnvironment(fx.stack.deps, scope, plain.workspace)).toEqual({
      restored: false,
      unavailable: 'the session has no repository to cache an environment for',
    });
    expect(await saveCachedEnvironment(fx.stack.deps, scope, plain.workspace)).toEqual({ saved: false, reason: 'unavailable' });
  });
});
