/**
 * The CLI's API types, generated from the OpenAPI document the server serves (openapi-typescript):
 * `npm run api-types` rewrites cli/generated/api.d.ts; a test fails when the committed file
 * drifts from the document.
 */
import openapiTS from 'openapi-typescript';
import { writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const API_TYPES_FILE = fileURLToPath(new URL('../cli/generated/api.d.ts', import.meta.url));

export async function generateApiTypes(document: unknown): Promise<string> {
  // openapi-typescript takes the document as a plain object; it does not fetch anything here.
  return openapiTS(document as Parameters<typeof openapiTS>[0], { immutableTypes: false });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { startLocalStack } = await import('../local/stack.ts');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stratus-api-types-'));
  const stack = await startLocalStack({ dataDir: dir });
  try {
    const document = await (await fetch(`${stack.apiUrl}/v1/openapi.json`)).json();
    writeFileSync(API_TYPES_FILE, await generateApiTypes(document));
    console.log(`wrote ${path.relative(process.cwd(), API_TYPES_FILE)}`);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
