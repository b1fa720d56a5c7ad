// Compiled only: the test kit is its own package (a dev dependency), with types, for the user's tests.
import { countPlaceholders, uniqueTablePrefix, type TestDatabase } from '@holdfast/testing';

export const kit: { db: TestDatabase; prefix: string; placeholders: number } = {
  db: 'sqlite',
  prefix: uniqueTablePrefix('app'),
  placeholders: countPlaceholders('postgres', 'SELECT $1, $2'),
};
