import { DefaultKeyGenerator } from './default-key.generator';
import { InjectiveKeyGenerator } from './injective-key.generator';
import type { KeyGenerator } from './key-generator';

/** The generator a failover without its own `keyGenerator` uses, by the module's `keys` option. */
export function moduleKeyGenerator(keys: 'java' | 'injective' | undefined): KeyGenerator {
  return keys === 'injective' ? injectiveKeyGenerator : defaultKeyGenerator;
}

const defaultKeyGenerator = new DefaultKeyGenerator();
const injectiveKeyGenerator = new InjectiveKeyGenerator();
