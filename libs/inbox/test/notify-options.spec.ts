import { describeEachDatabase } from '@holdfast/testing';
import { InboxNotifyUnsupportedError } from '../src';
import { createInboxApp } from './inbox-test-app';

describeEachDatabase('InboxModule notify option', (ctx) => {
  it('notify: true needs PostgreSQL: elsewhere startup stops with HOLDFAST_INBOX_NOTIFY_UNSUPPORTED', async () => {
    const started = createInboxApp(ctx, { notify: true });
    if (ctx.db === 'postgres') {
      const node = await started;
      await node.close();
      return;
    }
    const error = await started.then(
      (node) => node.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InboxNotifyUnsupportedError);
    expect((error as InboxNotifyUnsupportedError).code).toBe('HOLDFAST_INBOX_NOTIFY_UNSUPPORTED');
  });

  it('notifyListenUrl must be a postgres:// URL', async () => {
    await expect(createInboxApp(ctx, { notifyListenUrl: 'mysql://root@localhost/x' })).rejects.toMatchObject({
      code: 'HOLDFAST_CORE_INVALID_OPTIONS',
    });
  });
});
