import { ddlScript } from '@holdfast/core/kit';
import { INBOX_TABLES } from '../src';

// SPEC §6: COR_MESSAGE's times are the seed's per dialect: on SQL Server camunda-bpm-correlate's MS
// SQL DDL has DATETIME2 without a precision (issue #45 §5; DATETIME2(3) before), not DATETIMEOFFSET
// (issue #34 §3).
describe('COR_MESSAGE DDL on SQL Server', () => {
  it('declares INSERTED, EXPIRATION and NEXT_RETRY as DATETIME2', () => {
    const ddl = ddlScript('mssql', [INBOX_TABLES.message]);
    expect(ddl).toContain('INSERTED DATETIME2 NOT NULL');
    expect(ddl).toMatch(/EXPIRATION DATETIME2[,\n]/);
    expect(ddl).toMatch(/NEXT_RETRY DATETIME2[,\n]/);
    expect(ddl).not.toContain('DATETIMEOFFSET');
  });
});
