export {
  fenced,
  FencedRepository,
  FenceColumn,
  DEFAULT_FENCE_PROPERTY,
  type FencedOptions,
  type FencedUpdateResult,
} from './fenced-repository';
