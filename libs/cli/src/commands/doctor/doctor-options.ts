/** The lockers of @holdfast/locker, as `--locker` names them. */
export const DOCTOR_LOCKERS = ['lease-database', 'database', 'shared-file', 'custom'] as const;

export interface DoctorOptions {
  url: string | undefined;
  prefix?: string;
  /** The locker type the application's LockerModule uses (the Galera check depends on it). */
  locker?: string;
  /** How many instances of the application share the server (the connection budget). */
  instances?: number;
  /** The application's own pool size per instance (TypeORM's default for pg and mysql2: 10). */
  poolSize?: number;
  /** Holdfast's own connections per instance (lanes and LISTEN; default 3: lease, one inbox, LISTEN). */
  holdfastConnections?: number;
  /** Clock difference from which the clock check warns, in ms (default 1000). */
  clockWarnMs?: number;
  /** The URL the inbox's LISTEN connection uses (InboxModule notifyListenUrl); default the DataSource's. */
  listenUrl?: string;
  /** How long the LISTEN check waits for its notification, in ms (default 3000). */
  listenTimeoutMs?: number;
}
