// Compiled only: the test kit is its own entry point, with types, for the user's tests.
import { countPlaceholders, uniqueTablePrefix, type TestDatabase } from '@holdfast/core/testing';

export const kit: { db: TestDatabase; prefix: string; placeholders: number } = {
  db: 'sqlite',
  prefix: uniqueTablePrefix('app'),
  placeholders: countPlaceholders('postgres', 'SELECT $1, $2'),
};
