import {
  count,
  databaseOf,
  jsonOption,
  output,
  parseOptions,
  prefixOption,
  type CliCommand,
} from '../cli-command';
import { doctorCommand } from './doctor/doctor';
import { DOCTOR_LOCKERS } from './doctor/doctor-options';
import { doctorExitCode, formatDoctor } from './doctor/doctor-report';

// The checks, one file each, and the table that runs them are in doctor/.
export { clockCheck } from './doctor/clock.check';
export { doctorCommand } from './doctor/doctor';
export { DOCTOR_LOCKERS, type DoctorOptions } from './doctor/doctor-options';
export {
  doctorExitCode,
  formatDoctor,
  type DoctorCheck,
  type DoctorReport,
  type DoctorStatus,
} from './doctor/doctor-report';

export const doctor: CliCommand = {
  name: 'doctor',
  usage: `  doctor [--prefix P] [--locker ${DOCTOR_LOCKERS.join('|')}] [--instances N] [--pool-size N]
         [--listen-url URL]
      check what breaks Holdfast in production and say how to fix it: the clocks, a read-only
      primary, PgBouncer in transaction mode and the LISTEN path (through URL: the inbox's
      notifyListenUrl), schema drift, the connection budget (N instances with pools of N), Galera
      with the 'database' locker. Read-only. Exit code 0 all ok, 1 warnings, 2 a failure
`,
  async run(args, io) {
    const { values } = parseOptions(args, {
      prefix: prefixOption,
      json: jsonOption,
      locker: { type: 'string' },
      instances: { type: 'string' },
      'pool-size': { type: 'string' },
      'listen-url': { type: 'string' },
    });
    const report = await doctorCommand({
      ...databaseOf(io, values),
      locker: values.locker,
      instances: count('--instances', values.instances),
      poolSize: count('--pool-size', values['pool-size']),
      listenUrl: values['listen-url'],
    });
    output(io, values.json, report, () => formatDoctor(report));
    return doctorExitCode(report);
  },
};
