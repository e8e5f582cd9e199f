import { Module, type DynamicModule } from '@nestjs/common';
import { CommandProcessor } from './commands/command-processor';
import { CommandsController } from './commands/commands.controller';

/** Nest wiring only: the processor is composed in main.ts from the real adapters. */
@Module({})
export class KernelModule {
  static forRoot(processor: CommandProcessor): DynamicModule {
    return {
      module: KernelModule,
      controllers: [CommandsController],
      providers: [{ provide: CommandProcessor, useValue: processor }],
    };
  }
}
