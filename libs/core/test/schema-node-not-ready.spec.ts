import type { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor, type SqlClient, type TableSpec } from '@holdfast/core/kit';
import { createTestDataSource, uniqueTablePrefix } from '@holdfast/testing';
import { SchemaLock } from '../src/schema/schema-lock';

const SPEC: TableSpec = {
  name: 'CORE_NOT_READY',
  columns: [{ name: 'ID', type: { kind: 'varchar', length: 64 } }],
  primaryKey: ['ID'],
};

/** What a Galera node answers until it is a synced member again (mysql2's error fields). */
function notReady(): Error {
  return Object.assign(new Error('WSREP has not yet prepared node for application use'), {
    errno: 1047,
    code: 'ER_UNKNOWN_COM_ERROR',
  });
}

/**
 * The schema step at boot against a cluster node that cannot serve yet (1047 while a Galera node
 * rejoins): tried again until it can, within lockTimeoutMs; any other error is not. SQLite, with
 * the server's answer put in front of the schema step's first statement.
 */
describe('SchemaManager on a node that is not ready yet', () => {
  let dataSource: DataSource;
  let sql: SqlClient;

  beforeAll(async () => {
    dataSource = await createTestDataSource('sqlite');
    sql = sqlClientFor(dataSource);
  });

  afterEach(() => jest.restoreAllMocks());

  afterAll(async () => {
    await dataSource.destroy();
  });

  it('tries the step again while the node answers 1047, then creates the table', async () => {
    const spy = jest
      .spyOn(SchemaLock.prototype, 'run')
      .mockRejectedValueOnce(notReady())
      .mockRejectedValueOnce(notReady());
    const prefix = uniqueTablePrefix('nr');
    const live = await new SchemaManager(sql).apply(SPEC, prefix, 'create');
    expect(live.exists).toBe(true);
    expect(spy).toHaveBeenCalledTimes(3);
    expect(await new SchemaManager(sql).tableExists(`${prefix}CORE_NOT_READY`)).toBe(true);
  });

  it('gives up with the server’s error once lockTimeoutMs has passed', async () => {
    const spy = jest.spyOn(SchemaLock.prototype, 'run').mockImplementation(() => Promise.reject(notReady()));
    await expect(
      new SchemaManager(sql, { lockTimeoutMs: 400 }).apply(SPEC, uniqueTablePrefix('nr'), 'create'),
    ).rejects.toMatchObject({ errno: 1047 });
    expect(spy.mock.calls.length).toBeGreaterThan(1);
  });

  it('throws any other error at once', async () => {
    const syntax = Object.assign(new Error('You have an error in your SQL syntax'), { errno: 1064 });
    const spy = jest.spyOn(SchemaLock.prototype, 'run').mockRejectedValueOnce(syntax);
    await expect(new SchemaManager(sql).apply(SPEC, uniqueTablePrefix('nr'), 'create')).rejects.toBe(syntax);
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
