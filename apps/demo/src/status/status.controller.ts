import { Controller, Get } from '@nestjs/common';
import { instanceId } from '@holdfast/core/kit';

/**
 * Which process answers: its instance id, the one every Holdfast module of the process writes as
 * owner, holder or master (the dashboard at / shows it too), and its pid.
 */
@Controller()
export class StatusController {
  @Get('instance')
  instance() {
    return {
      pid: process.pid,
      instanceId: instanceId(),
      uptimeSeconds: Math.round(process.uptime()),
    };
  }
}
