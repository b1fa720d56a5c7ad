import { BadRequestException, Body, Controller, Get, Headers, HttpCode, Post } from '@nestjs/common';
import { HoldfastError } from '@holdfast/core';
import { InboxDelivery, MessageAcceptor, MessageManagement } from '@holdfast/inbox';
import { DEMO_NOTE_TYPE, DemoNoteHandler } from './demo-note.handler';

@Controller('inbox')
export class InboxDemoController {
  private seq = 0;

  constructor(
    private readonly acceptor: MessageAcceptor,
    private readonly management: MessageManagement,
    private readonly delivery: InboxDelivery,
    private readonly handler: DemoNoteHandler,
  ) {}

  /**
   * Accepts the JSON body as a note. An `Idempotency-Key` header becomes the message id, so a
   * repeated POST with the same key is accepted once (`accepted: false` the second time).
   */
  @Post()
  @HttpCode(202)
  async accept(@Body() body: unknown, @Headers('idempotency-key') key?: string) {
    const seq = ++this.seq;
    try {
      const result = await this.acceptor.accept({
        ...(key ? { id: key } : {}),
        type: DEMO_NOTE_TYPE,
        payload: { seq, body: body ?? null },
        ttl: 'PT1H',
      });
      return { ...result, seq };
    } catch (error) {
      if (error instanceof HoldfastError) throw new BadRequestException(error.message);
      throw error;
    }
  }

  /** Messages per status, and what this instance's handler did. */
  @Get()
  async status() {
    return {
      counts: await this.management.count(),
      delivering: this.delivery.isDelivering(),
      handler: {
        delivered: this.handler.delivered,
        failedFirstAttempts: this.handler.failedAttempts,
        recent: this.handler.recent,
      },
    };
  }
}
