import type { TypeFilter as MessageTypeFilter } from '../store/cor-message.management';

/**
 * A message type written as one string, the one spelling Holdfast prints and reads everywhere
 * (the dashboard, the `holdfast` command, logs and metrics): `namespace:name`, then
 * `@revision` when it has one (`shop:order-placed@2`); a type without a namespace is its name
 * alone (`order-placed`, `order-placed@2`).
 */
export function messageTypeLabel(type: {
  namespace?: string | null;
  name: string;
  revision?: string | null;
}): string {
  const { namespace, name, revision } = type;
  return `${namespace ? `${namespace}:` : ''}${name}${revision ? `@${revision}` : ''}`;
}

/**
 * The messages a label selects, as `messageTypeLabel` writes it: what the label leaves out is not
 * filtered. `shop:order` is that namespace and name in any revision, `order` that name in any
 * namespace, `:order` that name without a namespace, `shop:order@2` that revision only. The
 * namespace ends at the first `:`, the revision starts at the last `@`.
 */
export function parseMessageTypeLabel(label: string): MessageTypeFilter {
  const colon = label.indexOf(':');
  const namespace = colon < 0 ? undefined : label.slice(0, colon) || null;
  const rest = colon < 0 ? label : label.slice(colon + 1);
  const at = rest.lastIndexOf('@');
  const name = at < 0 ? rest : rest.slice(0, at);
  const revision = at < 0 ? undefined : rest.slice(at + 1);
  return {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(revision !== undefined ? { revision } : {}),
  };
}
