// @holdfast/cli/internal: plumbing shared with Holdfast's own packages (@holdfast/dashboard),
// its benchmarks and tests. Not part of the public API: no stability promise between versions.
export { StatusQueries, STATUS_SECTIONS, type StatusSection } from './status/status-queries';
