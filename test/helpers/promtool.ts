// promtool (Debian package `prometheus`), a test dependency like redis-server:
// missing, the suites that use it fail (never skip); .ci/run installs it.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

export async function requirePromtool(): Promise<void> {
  try {
    await promisify(execFile)('promtool', ['--version']);
  } catch {
    throw new Error('promtool is not on PATH; install it (apt-get install -y prometheus), as .ci/run does');
  }
}

/** Runs promtool with `args` in `cwd`, `stdin` on its standard input; its exit code and output. */
export function promtool(args: string[], options: { cwd?: string; stdin?: string } = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('promtool', args, { cwd: options.cwd });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
    child.stdin.end(options.stdin ?? '');
  });
}
