/**
 * A service's memory as its own /metrics reads it (`petstore_process_resident_memory_bytes`,
 * `petstore_nodejs_heap_size_used_bytes`), each reading after a full collection. The service exposes none: started
 * with `NODE_OPTIONS: COLLECTED_ON_SIGNAL` in its env, it collects on SIGUSR2 (bench/collect-on-signal.mjs).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { medianOf } from './load.js';
import { type Proc, ROOT } from './service.js';

/** NODE_OPTIONS for a service whose memory is read: `gc` exposed, and called on SIGUSR2. */
export const COLLECTED_ON_SIGNAL = `--expose-gc --import=${pathToFileURL(join(ROOT, 'bench/collect-on-signal.mjs')).href}`;
/** Time for a collection asked by signal to be done before the reading. */
const COLLECTION_MS = 500;

export interface Memory {
  rss: number;
  heap: number;
}

/** Asks `service` (started with COLLECTED_ON_SIGNAL) for a full collection, and gives it the time to make it. */
export async function collect(service: Proc): Promise<void> {
  process.kill(service.pid!, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, COLLECTION_MS));
}

/** RSS and heap used, in bytes: the median of `samples` readings `gapMs` apart, each after a full collection. */
export async function memoryOf(service: Proc, samples: number, gapMs: number): Promise<Memory> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    await collect(service);
    const text = await (await fetch(`${service.adminUrl}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    rss.push(value('petstore_process_resident_memory_bytes'));
    heap.push(value('petstore_nodejs_heap_size_used_bytes'));
  }
  return { rss: medianOf(rss), heap: medianOf(heap) };
}
