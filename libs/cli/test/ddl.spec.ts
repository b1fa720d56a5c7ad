import { DIALECTS } from '@holdfast/core/kit';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { HOLDFAST_TABLES } from '../src';
import { cli } from './cli-support';

const ROOT = join(__dirname, '../../..');

describe('holdfast ddl', () => {
  it.each(DIALECTS)('prints every table and index for %s, under the prefix', async (dialect) => {
    const { code, stdout, stderr } = await cli(['ddl', '--dialect', dialect, '--prefix', 'APP_']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    for (const table of HOLDFAST_TABLES) {
      expect(stdout).toContain(`CREATE TABLE APP_${table.name} (`);
      for (const index of table.indexes ?? []) expect(stdout).toContain(`CREATE INDEX APP_${index.name} ON`);
    }
  });

  it('--json: the same script in an object', async () => {
    const text = await cli(['ddl', '--dialect', 'postgres', '--prefix', 'APP_']);
    const json = await cli(['ddl', '--dialect', 'postgres', '--prefix', 'APP_', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ dialect: 'postgres', prefix: 'APP_', ddl: text.stdout });
  });

  it.each([
    [['ddl'], '--dialect is required'],
    [['ddl', '--dialect', 'db2'], "unknown dialect 'db2'"],
    [['ddl', '--dialect', 'sqlite', '--verbose'], "Unknown option '--verbose'"],
    [['ddl', '--dialect', 'sqlite', '--prefix', 'x; DROP'], 'Invalid table prefix "x; DROP"'],
    [['dll'], "unknown command 'dll'"],
  ])('%j is a usage error (exit 2) naming what was wrong', async (argv, message) => {
    const { code, stdout, stderr } = await cli(argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
  });

  it('runs as the holdfast bin, and as npm run ddl', () => {
    const bin = spawnSync(
      process.execPath,
      [
        '-r',
        join(ROOT, 'tools/register.js'),
        join(ROOT, 'libs/cli/src/main.ts'),
        'ddl',
        '--dialect',
        'postgres',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(bin.status).toBe(0);
    expect(bin.stdout).toContain('CREATE TABLE simba_mutex (');

    const npm = spawnSync('npm', ['run', '-s', 'ddl', '--', '--dialect', 'mariadb'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(npm.status).toBe(0);
    expect(npm.stdout).toContain('CREATE TABLE COR_MESSAGE (');

    const usage = spawnSync(
      process.execPath,
      ['-r', join(ROOT, 'tools/register.js'), join(ROOT, 'libs/cli/src/main.ts'), 'ddl'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(usage.status).toBe(2);
  });
});
