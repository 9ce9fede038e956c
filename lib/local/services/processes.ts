/**
 * Child-process hygiene for the local stack: every process we start is registered here and is stopped
 * on normal exit, on SIGINT/SIGTERM/SIGHUP and on an uncaught crash. A watchdog shell also kills the
 * child when this Node process disappears without running any handler (SIGKILL, OOM): no Java is ever
 * left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
const cleanups = new Set<() => Promise<void> | void>();
let hooksInstalled = false;
let shuttingDown = false;

/** True once a shutdown signal arrived: errors of work being torn down are expected then. */
export function isShuttingDown(): boolean {
  return shuttingDown;
}

function killAllSync(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  children.clear();
}

async function runCleanups(): Promise<void> {
  const pending = [...cleanups];
  cleanups.clear();
  await Promise.allSettled(pending.map(async (fn) => fn()));
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      shuttingDown = true;
      void runCleanups().finally(() => {
        killAllSync();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
      // A second signal, or cleanups that hang, must not keep anything alive.
      setTimeout(() => {
        killAllSync();
        process.exit(1);
      }, 5_000).unref();
    });
  }
  process.on('uncaughtException', (error) => {
    console.error(error);
    killAllSync();
    process.exit(1);
  });
}

/**
 * Registers an async cleanup to run on Ctrl-C / SIGTERM (normal paths call their own stop functions).
 * Returns a function that unregisters it.
 */
export function onShutdown(fn: () => Promise<void> | void): () => void {
  installHooks();
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/**
 * Spawns a long-lived child process that is guaranteed not to outlive this process.
 *
 * @returns the child and a `stop()` that kills it (SIGTERM, then SIGKILL after `graceMs`).
 */
export function spawnSupervised(
  command: string,
  args: string[],
  options: { cwd?: string; graceMs?: number; env?: NodeJS.ProcessEnv } = {},
): { child: ChildProcess; stop: () => Promise<void> } {
  installHooks();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const watchdog = spawnWatchdog(child.pid);

  const stop = async (): Promise<void> => {
    watchdog?.kill('SIGKILL');
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? 2_000);
    await exited;
    clearTimeout(timer);
    children.delete(child);
  };
  return { child, stop };
}

/** A tiny detached shell that kills `pid` as soon as this Node process is gone. */
function spawnWatchdog(pid: number | undefined): ChildProcess | undefined {
  if (pid === undefined || process.platform === 'win32') return undefined;
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done; kill -9 ${pid} 2>/dev/null; exit 0`;
  const watchdog = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watchdog.unref();
  children.add(watchdog);
  watchdog.once('exit', () => children.delete(watchdog));
  return watchdog;
}
