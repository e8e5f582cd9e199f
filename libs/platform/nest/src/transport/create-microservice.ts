import type { DynamicModule, INestMicroservice, LoggerService, LogLevel, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JetStreamErrorsFilter } from './jetstream-errors.filter';
import type { JetStreamTransport } from './jetstream.transport';

/** A Nest application whose only entry point is a JetStream consumer (no HTTP server). */
export async function createJetStreamMicroservice(
  module: Type<unknown> | DynamicModule,
  transport: JetStreamTransport,
  options: { logger?: LoggerService | LogLevel[] | false } = {},
): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice(module, { strategy: transport, logger: options.logger });
  app.useGlobalFilters(new JetStreamErrorsFilter());
  return app;
}
