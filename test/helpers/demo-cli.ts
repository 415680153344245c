// The demo's compiled entry point (demo/main.js in the build test/global-setup.ts
// makes once per run), started as `npm run demo` starts it, minus the build.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import { within } from './until.js';

export interface DemoProcess {
  pageUrl: string;
  proxyUrl: string;
  /** SIGTERM, then the exit code (SIGKILL after 10 s) */
  stop(): Promise<number | null>;
}

/** Starts `node demo/main.js ...args`; resolves when it prints where its page is. */
export async function startDemoCli(args: string[], readyWithinMs = 30_000): Promise<DemoProcess> {
  const child = spawn(process.execPath, [join(inject('cliBuild'), 'demo', 'main.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let out = '';
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const started = new Promise<string[]>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /^demo page: (\S+) \(proxy: (\S+)\)$/m.exec(out);
        if (match !== null) done(match);
      });
      child.once('exit', (code) => fail(new Error(`the demo exited with ${code} before it started:\n${out}`)));
    });
    const [, pageUrl, proxyUrl] = await within(started, readyWithinMs, () => `the demo to start:\n${out}`);
    return { pageUrl, proxyUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
