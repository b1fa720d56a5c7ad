import { Controller, Get } from '@nestjs/common';

/** Which process answers: the dashboard at / shows the same pid; tests tell instances apart by it. */
@Controller()
export class StatusController {
  @Get('instance')
  instance() {
    return {
      pid: process.pid,
      instanceId: process.env.HOLDFAST_INSTANCE_ID ?? `pid-${process.pid}`,
      uptimeSeconds: Math.round(process.uptime()),
    };
  }
}
