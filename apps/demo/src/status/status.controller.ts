import { Controller, Get, Header } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The status page: plain HTML that polls each module's JSON endpoint. */
@Controller()
export class StatusController {
  private readonly page = readFileSync(join(__dirname, 'status.html'), 'utf8');

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  index(): string {
    return this.page;
  }

  @Get('instance')
  instance() {
    return {
      pid: process.pid,
      instanceId: process.env.HOLDFAST_INSTANCE_ID ?? `pid-${process.pid}`,
      uptimeSeconds: Math.round(process.uptime()),
    };
  }
}
