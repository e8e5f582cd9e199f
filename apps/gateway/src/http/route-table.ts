import { Inject, Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { ROUTE_SPEC, type RouteSpec } from './route';

/** Every route the app serves, read from the controllers Nest registered (tests and OpenAPI use it). */
@Injectable()
export class RouteTable {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
  ) {}

  routes(): RouteSpec[] {
    const routes: RouteSpec[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const spec = Reflect.getMetadata(ROUTE_SPEC, (prototype as Record<string, unknown>)[name] as object) as RouteSpec | undefined;
        if (spec) routes.push(spec);
      }
    }
    return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }
}
