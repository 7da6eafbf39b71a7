import type { AppContext } from '../context.js'

/** Every route plugin is registered twice (spec path and /v3 path); only one copy appears in OpenAPI. */
export interface RouteOptions {
  ctx: AppContext
  documented: boolean
}
