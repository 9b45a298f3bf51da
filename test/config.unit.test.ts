import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has working defaults: SQLite at ./data/petstore.db, memory limits, ports 8080 and 127.0.0.1:8081', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      adminHost: '127.0.0.1',
      adminPort: 8081,
      adminToken: null,
      database: { kind: 'sqlite', file: './data/petstore.db' },
      redis: null,
      publicUrl: 'http://localhost:8080',
      demoKeys: true,
      trustProxy: false,
    });
    expect(config.petsGet.sunsetAt.getTime()).toBeGreaterThanOrEqual(config.petsGet.deprecatedAt.getTime());
  });

  it('reads the tick of the event-loop delay metrics: 10 ms unless EVENT_LOOP_RESOLUTION_MS says otherwise', () => {
    expect(loadConfig({}).eventLoopResolutionMs).toBe(10);
    expect(loadConfig({ EVENT_LOOP_RESOLUTION_MS: '1' }).eventLoopResolutionMs).toBe(1);
    expect(() => loadConfig({ EVENT_LOOP_RESOLUTION_MS: '0' })).toThrow(ConfigError);
  });

  it('pauses a banned caller’s connection 100 ms unless BANNED_READ_PAUSE_MS says otherwise (0: not at all)', () => {
    expect(loadConfig({}).timeouts.bannedReadPauseMs).toBe(100);
    expect(loadConfig({ BANNED_READ_PAUSE_MS: '1000' }).timeouts.bannedReadPauseMs).toBe(1000);
    expect(loadConfig({ BANNED_READ_PAUSE_MS: '0' }).timeouts.bannedReadPauseMs).toBe(0);
  });

  it('reads each store from DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://u@h/db',
    });
    expect(loadConfig({ DATABASE_URL: 'file:/tmp/x.db' }).database).toEqual({ kind: 'sqlite', file: '/tmp/x.db' });
    expect(loadConfig({ DATABASE_URL: './other.db' }).database).toEqual({ kind: 'sqlite', file: './other.db' });
  });

  it('reads one Redis from REDIS_URL, or a Redis Cluster from REDIS_CLUSTER_NODES', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis).toEqual({
      kind: 'single',
      url: 'redis://127.0.0.1:6379',
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001,[::1]:7002' }).redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  it('never creates demo keys in production or with DEMO_KEYS=false', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).demoKeys).toBe(false);
    expect(loadConfig({ DEMO_KEYS: 'false' }).demoKeys).toBe(false);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ ADMIN_PORT: '-1' }, 'ADMIN_PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ REDIS_CLUSTER_NODES: 'redis://a:7000' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:7000,b' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:0' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:70000' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:7000,,b:7001' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:7000', REDIS_URL: 'redis://a:6379' }, 'REDIS_CLUSTER_NODES'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL'],
    [{ PETS_GET_SUNSET_AT: '2020-01-01T00:00:00Z' }, 'PETS_GET_SUNSET_AT'],
    [{ PETS_GET_DEPRECATED_AT: 'yesterday' }, 'PETS_GET_DEPRECATED_AT'],
    [{ PETS_GET_SUNSET_AT: '2027-07-01' }, 'PETS_GET_SUNSET_AT'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    [{ DEMO_KEYS: 'maybe' }, 'DEMO_KEYS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ TRUST_PROXY: 'everyone' }, 'TRUST_PROXY'],
    [{ BAN_AFTER_REJECTIONS: '0' }, 'BAN_AFTER_REJECTIONS'],
    [{ BAN_MAX_SECONDS: '86401' }, 'BAN_MAX_SECONDS'],
    [{ BAN_FIRST_SECONDS: '7200' }, 'BAN_FIRST_SECONDS'],
    [{ BANNED_READ_PAUSE_MS: '1001' }, 'BANNED_READ_PAUSE_MS'],
    [{ BANNED_READ_PAUSE_MS: '-1' }, 'BANNED_READ_PAUSE_MS'],
  ])('refuses %j, naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}: `));
  });

  it('never echoes the admin token it refuses', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'hunter2' })).toThrow(/^(?!.*hunter2)/);
  });
});
