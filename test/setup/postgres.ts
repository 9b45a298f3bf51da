import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrations.js';
import { admin, postgresAvailable, TEST_DATABASE_URL } from '../helpers/database.js';

/**
 * Global set-up of the projects that use PostgreSQL: one database migrated for the run, which every
 * test's store copies (`CREATE DATABASE … TEMPLATE`, ../helpers/database.ts), and dropped at the end.
 * Outside CI, without a PostgreSQL, there is none and the suites that need one skip.
 */
export default async function postgresTemplate(project: TestProject): Promise<() => Promise<void>> {
  if (!(await postgresAvailable())) {
    project.provide('postgresTemplate', null);
    return async () => {};
  }
  const name = `petstore_template_${randomBytes(6).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const db = openDatabase({ kind: 'postgres', url: url.toString() });
  try {
    await migrate(db, 'postgres');
  } finally {
    // A template must have no connection when it is copied.
    await db.destroy();
  }
  project.provide('postgresTemplate', name);
  return () => admin(`drop database if exists ${name} with (force)`);
}
