// Minimal typings for the embedded protocol servers the local stack uses (they ship none).
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}

declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  interface S3rverOptions {
    directory: string;
    silent?: boolean;
    configureBuckets?: { name: string }[];
    resetOnClose?: boolean;
  }
  interface FilesystemStore {
    getMetadata(bucket: string, key: string): Promise<Record<string, string>>;
    existsObject(bucket: string, key: string): Promise<boolean>;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    store: FilesystemStore;
    configureBuckets(): Promise<void>;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
