import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // Shutdown hooks release mutexes and locks and flush async writes on SIGTERM/SIGINT.
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port);
  const url = process.env.DATABASE_URL
    ? new URL(process.env.DATABASE_URL).protocol.replace(':', '')
    : 'sqlite';
  new Logger('Demo').log(`Holdfast demo on http://localhost:${port} (database: ${url})`);
}

void bootstrap();
