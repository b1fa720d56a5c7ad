import { Module } from '@nestjs/common';
import { InboxModule } from '@holdfast/inbox';
import { DemoNoteHandler } from './demo-note.handler';
import { InboxDemoController } from './inbox-demo.controller';

/**
 * `POST /inbox` stores the JSON body as a message; the delivery loop hands it to DemoNoteHandler,
 * which fails the first attempt of every third message (retried 2 s later). `GET /inbox` shows
 * the counts per status. On SQLite the inbox runs in leader mode on the application's SimbaModule.
 */
@Module({
  imports: [
    InboxModule.forRoot({
      pollInterval: '500ms',
      retry: { initialDelay: '2s', maxRetries: 3 },
      cleanupInterval: '1m',
      // Every attempt with its error (the page's message search, `holdfast messages history`),
      // and the per-minute figures the page's charts of the last hour draw.
      history: true,
      stats: true,
    }),
  ],
  controllers: [InboxDemoController],
  providers: [DemoNoteHandler],
})
export class InboxDemoModule {}
