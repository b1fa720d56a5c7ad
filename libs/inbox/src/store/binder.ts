// The inbox's statements bind through core's one binder.
export { StatementBinder as Binder } from '@holdfast/core/kit';
