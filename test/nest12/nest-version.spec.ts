/* eslint-disable @typescript-eslint/no-require-imports -- the point is to load whatever the NestJS 12 mapping resolves */
// Guards the NestJS 12 step: fails if the mapping silently loads the repo's NestJS 11.
describe('NestJS 12 step', () => {
  it.each(['core', 'common', 'testing', 'typeorm', 'schedule', 'terminus'])('loads @nestjs/%s 12', (pkg) => {
    const { version } = require(`@nestjs/${pkg}/package.json`);
    expect(version).toMatch(/^12\./);
  });

  it('builds a Nest 12 application context', async () => {
    const { Test } = require('@nestjs/testing');
    const { Injectable } = require('@nestjs/common');
    class Thing {}
    Injectable()(Thing);
    const moduleRef = await Test.createTestingModule({ providers: [Thing] }).compile();
    expect(moduleRef.get(Thing)).toBeInstanceOf(Thing);
  });
});
