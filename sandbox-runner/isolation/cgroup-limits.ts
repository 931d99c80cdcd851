import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

export interface ProcessLimits {
  /** Most processes (and threads) a command may have at once. */
  maxProcesses: number;
  /** Memory (RAM and swap) a command may use before the kernel kills it. */
  maxMemoryBytes: number;
}

export const DEFAULT_PROCESS_LIMITS: ProcessLimits = { maxProcesses: 256, maxMemoryBytes: 1024 * 1024 * 1024 };

/** One command's cgroups: join them before exec, read what was hit, then kill everything left and remove them. */
export interface CommandCgroup {
  /** Shell prefix that moves the shell into the cgroups before it execs the sandbox. */
  joinScript: string;
  /** Which limit the command ran into, if any. */
  limitHit(): Promise<'memory' | 'processes' | undefined>;
  /** Kills every process still in the cgroup (a background job that outlived its shell) and removes it. */
  destroy(): Promise<void>;
}

export interface CgroupLimiter {
  create(name: string): Promise<CommandCgroup>;
}

const CGROUP_ROOT = '/sys/fs/cgroup';

/**
 * cgroup v1 `pids` and `memory` controllers (docs/local-stack.md: writable here as root; `prlimit
 * --nproc` does nothing for uid 0). Returns undefined where they are not writable (Lambda,
 * non-root), and the caller decides whether that is acceptable.
 */
export async function createCgroupLimiter(limits: ProcessLimits, parentName = 'stratus'): Promise<CgroupLimiter | undefined> {
  const pidsParent = path.join(CGROUP_ROOT, 'pids', parentName);
  const memParent = path.join(CGROUP_ROOT, 'memory', parentName);
  try {
    await fs.mkdir(pidsParent, { recursive: true });
    await fs.mkdir(memParent, { recursive: true });
  } catch {
    return undefined;
  }
  if (!existsSync(path.join(pidsParent, 'cgroup.procs')) || !existsSync(path.join(memParent, 'cgroup.procs'))) return undefined;

  return {
    async create(name) {
      const pids = path.join(pidsParent, name);
      const mem = path.join(memParent, name);
      await fs.mkdir(pids);
      await fs.mkdir(mem);
      await fs.writeFile(path.join(pids, 'pids.max'), String(limits.maxProcesses));
      await fs.writeFile(path.join(mem, 'memory.limit_in_bytes'), String(limits.maxMemoryBytes));
      // Without swap accounting a hog could page out instead of being stopped.
      await fs.writeFile(path.join(mem, 'memory.memsw.limit_in_bytes'), String(limits.maxMemoryBytes)).catch(() => undefined);
      return {
        joinScript: `echo $$ > ${path.join(pids, 'cgroup.procs')} && echo $$ > ${path.join(mem, 'cgroup.procs')} && exec "$@"`,
        async limitHit() {
          const oom = await fs.readFile(path.join(mem, 'memory.oom_control'), 'utf8').catch(() => '');
          if (/^oom_kill [1-9]/m.test(oom)) return 'memory';
          const events = await fs.readFile(path.join(pids, 'pids.events'), 'utf8').catch(() => '');
          if (/^max [1-9]/m.test(events)) return 'processes';
          return undefined;
        },
        async destroy() {
          for (const dir of [pids, mem]) await killAll(dir);
          for (const dir of [pids, mem]) await removeCgroup(dir);
        },
      };
    },
  };
}

async function killAll(dir: string): Promise<void> {
  // A fork bomb can spawn between reading and killing; repeat until the group is empty.
  for (let round = 0; round < 50; round++) {
    const procs = (await fs.readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
    if (procs.length === 0) return;
    for (const pid of procs) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function removeCgroup(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await fs.rmdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      // EBUSY while the last killed processes are being reaped.
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
