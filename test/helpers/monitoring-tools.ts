// The monitoring tools the tests run: promtool and amtool (Debian packages
// `prometheus` and `prometheus-alertmanager`), test dependencies like
// redis-server: missing, the suites that use them fail (never skip); .ci/run
// installs them.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

/** Fails (the suite, at import) unless `command` runs; `debianPackage` says where it comes from. */
export async function requireTool(command: string, debianPackage: string): Promise<void> {
  try {
    await promisify(execFile)(command, ['--version']);
  } catch {
    throw new Error(`${command} is not on PATH; install it (apt-get install -y ${debianPackage}), as .ci/run does`);
  }
}

export const requirePromtool = (): Promise<void> => requireTool('promtool', 'prometheus');

/** Runs promtool with `args` in `cwd`, `stdin` on its standard input; its exit code and output. */
export async function promtool(
  args: string[],
  options: { cwd?: string; stdin?: string } = {},
): Promise<{ code: number; out: string }> {
  const { code, out } = await runTool('promtool', args, options);
  return { code, out };
}

/** Runs `command` with `args` in `cwd`, `stdin` on its standard input; its exit code, stdout, and both outputs as they came. */
export function runTool(
  command: string,
  args: string[],
  options: { cwd?: string; stdin?: string } = {},
): Promise<{ code: number; out: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd });
    let out = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, out, stdout }));
    child.stdin.end(options.stdin ?? '');
  });
}
