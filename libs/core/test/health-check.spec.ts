import { Test } from '@nestjs/testing';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { healthResult, probeHealth } from '@holdfast/core/kit';

// The indicators build terminus's result shape without loading terminus; this proves that the
// real HealthCheckService reads it: up passes, down fails the check with the details kept.
describe('health results read by @nestjs/terminus', () => {
  let health: HealthCheckService;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    health = app.get(HealthCheckService);
    close = () => app.close();
  });
  afterAll(() => close());

  it('an up result passes the check', async () => {
    const result = await health.check([() => Promise.resolve(healthResult('store', 'up', { rows: 3 }))]);
    expect(result.status).toBe('ok');
    expect(result.details.store).toEqual({ status: 'up', rows: 3 });
  });

  it('a failed probe is down and fails the check, with its message', async () => {
    const failing = () =>
      probeHealth('store', { pending: 1 }, () => Promise.reject(new Error('connection refused')));
    await expect(health.check([failing])).rejects.toMatchObject({
      response: {
        status: 'error',
        error: { store: { status: 'down', pending: 1, message: 'connection refused' } },
      },
    });
  });
});
