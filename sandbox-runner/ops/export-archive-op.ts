import { promises as fs, createReadStream } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { exportTarGz } from '../workspace/archive-export.ts';
import { defineOp } from './op.ts';

export interface ExportArchiveResult {
  type: 'export_archive';
  /** Key of the tar.gz in the bucket; one per version (versions never change). */
  key: string;
  size: number;
}

/** Packs the whole workspace version as a tar.gz where the API can stream it to a caller. */
export const exportArchiveOp = defineOp({
  schema: z.object({ type: z.literal('export_archive') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const version = ctx.request.workspace.version;
    const key = ctx.remote.key(`exports/archives/${String(version).padStart(10, '0')}.tar.gz`);
    const file = path.join(ctx.local.dir, `export-${version}.tar.gz`);
    try {
      await exportTarGz(ctx.paths.root, (await ctx.local.readState())?.entries ?? {}, file);
      const { size } = await fs.stat(file);
      await ctx.remote.put(key, createReadStream(file), { contentLength: size, contentType: 'application/gzip' });
      const result: ExportArchiveResult = { type: 'export_archive', key, size };
      return { result };
    } finally {
      await fs.rm(file, { force: true });
    }
  },
});
