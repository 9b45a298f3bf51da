/**
 * What a request for an older version costs (docs/versions.md, issue 34): the oldest version against the
 * newest, by turns on one service (b: the oldest, a: the newest), on `GET /pets/{petId}` and `GET
 * /store/orders` (memory keeps one answer, or page, per version). The newest against the build before versions is
 * `npm run bench:ab`.
 */
import { NEWEST_VERSION, OLDEST_VERSION } from '../src/versions/versions.js';
import { type ByTurns, byTurns, type Requests } from './load.js';
import { CONFIG_ROUNDS, CONFIG_TURN_SECONDS, get, type ModeRun } from './mode-run.js';

export interface VersionFigures {
  pets: ByTurns;
  orders: ByTurns;
}

const inVersion = (requests: Requests, version: string): Requests =>
  requests.map((request) => ({ ...request, headers: { ...request.headers, 'petstore-version': version } }));

export async function measureVersions(run: ModeRun): Promise<VersionFigures> {
  const turns = async (path: string, requests: Requests) => {
    const measured = await byTurns(
      run.service,
      run.service,
      { a: inVersion(requests, NEWEST_VERSION), b: inVersion(requests, OLDEST_VERSION) },
      run.settings.connections,
      CONFIG_ROUNDS,
      CONFIG_TURN_SECONDS,
    );
    process.stderr.write(
      `  ${run.mode}: ${path}, ${OLDEST_VERSION} ÷ ${NEWEST_VERSION} by turns: median ${measured.median} (${measured.ratios.join(', ')})\n`,
    );
    return measured;
  };
  return {
    pets: await turns('GET /pets/{petId}', run.pets),
    orders: await turns('GET /store/orders', get('/store/orders', run.keys.listOrders)),
  };
}
