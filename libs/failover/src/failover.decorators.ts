// The public decorators of @holdfast/failover (implemented in decorators/).
export { Failover } from './decorators/failover.decorator';
export { FailoverPayload } from './decorators/failover-payload.decorator';
export {
  InjectFailoverStore,
  InjectFailoverOptions,
  InjectFailoverExecutor,
} from './decorators/inject-failover.decorators';
