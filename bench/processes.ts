/**
 * `npm run bench:processes`: PROCESSES (default 12) fresh processes of this build, one after another,
 * each warmed and then measured alone on embedded `GET /pets/{petId}` over 500 keys (3 rounds of
 * 3 s): each one's CPU µs per request. A process's speed is settled in its first moments (the JIT's
 * choices, V8's pretenuring: docs/performance.md#one-speed-per-process), so one process measured
 * many times says nothing of the next one; this shows the spread, and how many processes settled
 * slower than the rest (a median above 1.3 times the median of all). BENCH_MAIN measures another build.
 */
import { join } from 'node:path';
import { measure, medianOf, type Requests, round } from './load.js';
import { ROOT, startService } from './service.js';
import { createKeys, migratedSqliteFile } from './setup.js';

const processes = Number(process.env.PROCESSES || 12);
const main = process.env.BENCH_MAIN || join(ROOT, 'dist/main.js');
const database = await migratedSqliteFile();
const keys = await createKeys(database, { perPath: 500, limited: 0 });
const requests: Requests = keys.pets.map((key) => ({ method: 'GET', path: '/pets/1', headers: { 'x-api-key': key } }));
const medians: number[] = [];
for (let i = 0; i < processes; i++) {
  const service = await startService({ DATABASE_URL: database, REDIS_URL: '' }, main);
  try {
    const rounds: number[] = [];
    for (let r = 0; r < 3; r++)
      rounds.push(
        (await measure(service, requests, { connections: 50, seconds: 3, warmupSeconds: r === 0 ? 3 : 0 }))
          .cpuUsPerRequest,
      );
    medians.push(medianOf(rounds));
    console.log(`process ${i + 1}: CPU µs/req ${rounds.join(', ')}`);
  } finally {
    await service.stop();
  }
}
const all = medianOf(medians);
const slow = medians.filter((us) => us > 1.3 * all).length;
console.log(
  `${processes} processes of ${main}: median CPU µs/req ${round(all, 1)}; ${slow} settled slower than 1.3 times that`,
);
