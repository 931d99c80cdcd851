/** Sizes as the model-facing text prints them: `512 bytes`, `1.5KB`, `256KB`, `3.2MB`, `1GB`. */
export function formatFileSize(bytes: number): string {
  const kb = bytes / 1024;
  if (kb < 1) return `${bytes} bytes`;
  if (kb < 1024) return `${trimZero(kb.toFixed(1))}KB`;
  const mb = kb / 1024;
  if (mb < 1024) return `${trimZero(mb.toFixed(1))}MB`;
  return `${trimZero((mb / 1024).toFixed(1))}GB`;
}

function trimZero(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}
