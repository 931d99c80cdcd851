import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHIPPED_COMPILE_CACHE_DIR } from '../../functions/handlers/compile-cache.ts';
import { bundleLambda } from '../../infra/constructs/bundle-options.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const ENTRY = `export const handler = async () => ({ statusCode: 200, body: 'ok' });`;

/** Imports a bundle's index.mjs in a fresh node and calls its handler. */
function importBundle(dir: string): { compileCache: string; answer: unknown } {
  const script = `const m = await import(${JSON.stringify(path.join(dir, 'index.mjs'))}); console.log(JSON.stringify({ compileCache: m.compileCache, answer: await m.handler() }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, TMPDIR: path.join(dir, '..', 'tmp') },
  });
  return JSON.parse(out) as { compileCache: string; answer: unknown };
}

/**
 * Every Lambda bundle's index.mjs turns on the compile cache shipped beside it, then imports the
 * handler (infra/constructs/lambda-entry-plugin.ts). The cache itself can only be built by the
 * Node the function runs (docs/deploy.md, "Node's compile cache"); this machine's Node 20 has
 * no compile cache, which is what is checked here: the bundle works without one and with one it
 * cannot use, and a build asked to make one with a Node that cannot fails instead of shipping none.
 */
describe('the compile cache of a Lambda bundle', () => {
  const tmp = makeTempDir();
  afterAll(() => tmp.cleanup());
  const entry = path.join(tmp.dir, 'entry.ts');
  writeFileSync(entry, ENTRY);
  mkdirSync(path.join(tmp.dir, 'tmp'));

  it('is absent from a default build, whose entry still serves the handler', () => {
    const dir = path.join(tmp.dir, 'plain');
    bundleLambda(entry, dir, {}, '');
    expect(existsSync(path.join(dir, SHIPPED_COMPILE_CACHE_DIR))).toBe(false);
    expect(importBundle(dir)).toEqual({ compileCache: 'none', answer: { statusCode: 200, body: 'ok' } });
  }, 60_000);

  it('is left alone by a Node without a compile cache, which runs the bundle as without one', () => {
    const dir = path.join(tmp.dir, 'shipped');
    bundleLambda(entry, dir, {}, '');
    mkdirSync(path.join(dir, SHIPPED_COMPILE_CACHE_DIR));
    expect(importBundle(dir)).toEqual({ compileCache: 'unsupported', answer: { statusCode: 200, body: 'ok' } });
  }, 60_000);

  it('fails the build when the Node given to build it writes none', () => {
    const dir = path.join(tmp.dir, 'asked');
    expect(() => bundleLambda(entry, dir, {}, process.execPath)).toThrow(/wrote no compile cache \(the entry said: unsupported\)/);
  }, 60_000);
});
