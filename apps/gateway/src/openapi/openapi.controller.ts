import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, defineRoute } from '../http/route';
import { RouteTable } from '../http/route-table';
import { openApiDocument } from './openapi.document';

const OpenApiRoute = defineRoute({ method: 'GET', path: '/openapi.json', tag: 'meta', summary: 'This OpenAPI document', public: true });

@Controller()
export class OpenApiController {
  private document: Record<string, unknown> | null = null;

  constructor(@Inject(RouteTable) private readonly table: RouteTable) {}

  @ApiRoute(OpenApiRoute)
  openapi() {
    this.document ??= openApiDocument(this.table.routes(), '0.1.0');
    return this.document;
  }
}
