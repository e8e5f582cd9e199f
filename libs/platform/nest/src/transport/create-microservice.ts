import type { Logger } from '@berth/ports';
import type { DynamicModule, INestMicroservice, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JetStreamErrorsFilter } from './jetstream-errors.filter';
import { nestLogger } from '../logging/nest-logger';
import type { JetStreamTransport } from './jetstream.transport';

/** A Nest application whose only entry point is a JetStream consumer (no HTTP server). */
export async function createJetStreamMicroservice(
  module: Type<unknown> | DynamicModule,
  transport: JetStreamTransport,
  log: Logger,
): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice(module, { strategy: transport, logger: nestLogger(log) });
  app.useGlobalFilters(new JetStreamErrorsFilter());
  return app;
}
