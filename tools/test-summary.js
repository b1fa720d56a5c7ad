#!/usr/bin/env node
/**
 * Summarizes a Jest JSON report by lib and by database:
 *   HOLDFAST_TEST_DATABASES=sqlite,postgres,mariadb npx jest --json --outputFile=.tmp/jest.json
 *   node tools/test-summary.js .tmp/jest.json
 * A test counts for a database when one of its describe titles ends with `[sqlite]`,
 * `[postgres]` or `[mariadb]` (as describeEachDatabase names them) or names the database in
 * its title; the others are database-independent.
 */
const fs = require('node:fs');
const path = require('node:path');

const report = JSON.parse(fs.readFileSync(process.argv[2] ?? '.tmp/jest.json', 'utf8'));
const DATABASES = ['sqlite', 'postgres', 'mariadb'];
const rows = new Map();

for (const file of report.testResults) {
  const rel = path.relative(process.cwd(), file.name);
  const lib = rel.startsWith('libs/')
    ? rel.split('/')[1]
    : rel.startsWith('apps/')
      ? 'demo'
      : `e2e:${rel.split('/')[1]}`;
  for (const t of file.assertionResults) {
    const title = [...t.ancestorTitles, t.title].join(' ');
    const db =
      DATABASES.find((d) => title.includes(`[${d}]`)) ??
      DATABASES.find((d) => new RegExp(`\\b${d}\\b`).test(title)) ??
      'any';
    const key = `${lib}\t${db}`;
    const row = rows.get(key) ?? { passed: 0, failed: 0, other: 0 };
    if (t.status === 'passed') row.passed++;
    else if (t.status === 'failed') row.failed++;
    else row.other++;
    rows.set(key, row);
  }
}

const byDb = Object.fromEntries([...DATABASES, 'any'].map((d) => [d, { passed: 0, failed: 0 }]));
console.log('| lib | database | passed | failed |\n|---|---|---|---|');
for (const [key, row] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
  const [lib, db] = key.split('\t');
  byDb[db].passed += row.passed;
  byDb[db].failed += row.failed;
  console.log(
    `| ${lib} | ${db} | ${row.passed} | ${row.failed}${row.other ? ` (+${row.other} other)` : ''} |`,
  );
}
console.log('\n| database | passed | failed |\n|---|---|---|');
for (const [db, row] of Object.entries(byDb)) console.log(`| ${db} | ${row.passed} | ${row.failed} |`);
console.log(`\n${report.numPassedTests} passed, ${report.numFailedTests} failed`);
