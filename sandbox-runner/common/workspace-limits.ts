/** A workspace's size limits: the runner enforces them on every save, the API states them in its answers. */
export interface WorkspaceLimits {
  /** Total bytes of file content. */
  maxBytes: number;
  maxFiles: number;
  /** Largest single file. */
  maxFileBytes: number;
}

export const DEFAULT_WORKSPACE_LIMITS: WorkspaceLimits = {
  maxBytes: 2 * 1024 * 1024 * 1024,
  maxFiles: 50_000,
  maxFileBytes: 512 * 1024 * 1024,
};
