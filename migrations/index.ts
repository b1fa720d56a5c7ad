import type { MigrationInterface } from 'typeorm';
import { CreateFailoverStore1764000000001 } from './1764000000001-create-failover-store';
import { CreateSimbaMutex1764000000002 } from './1764000000002-create-simba-mutex';
import { CreateHoldfastLock1764000000003 } from './1764000000003-create-holdfast-lock';
import { CreateCorMessage1764000000004 } from './1764000000004-create-cor-message';
import { ConvertCorMessageTimes1764000000405 } from './1764000000405-convert-cor-message-times';
import { CreateInboxLease1764000000406 } from './1764000000406-create-inbox-lease';
import { CreateInboxGroup1764000000407 } from './1764000000407-create-inbox-group';
import { CorMessageFillFactor1764000000408 } from './1764000000408-cor-message-fill-factor';
import { CreateInboxPause1764000000409 } from './1764000000409-create-inbox-pause';
import { CorMessageTraceContext1764000000410 } from './1764000000410-cor-message-trace-context';
import { CreateInboxHistory1764000000411 } from './1764000000411-create-inbox-history';
import { CorMessagePriority1764000000412 } from './1764000000412-cor-message-priority';
import { CorMessageTypeIndex1764000000413 } from './1764000000413-cor-message-type-index';
import { CreateInboxRate1764000000414 } from './1764000000414-create-inbox-rate';

/** All Holdfast migrations, in order: pass to TypeORM's `migrations` option. */
export const HOLDFAST_MIGRATIONS: (new () => MigrationInterface)[] = [
  CreateFailoverStore1764000000001,
  CreateSimbaMutex1764000000002,
  CreateHoldfastLock1764000000003,
  CreateCorMessage1764000000004,
  ConvertCorMessageTimes1764000000405,
  CreateInboxLease1764000000406,
  CreateInboxGroup1764000000407,
  CorMessageFillFactor1764000000408,
  CreateInboxPause1764000000409,
  CorMessageTraceContext1764000000410,
  CreateInboxHistory1764000000411,
  CorMessagePriority1764000000412,
  CorMessageTypeIndex1764000000413,
  CreateInboxRate1764000000414,
];
