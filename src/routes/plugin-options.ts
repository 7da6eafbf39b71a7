import type { AppContext } from '../context.js'

export interface RouteOptions {
  ctx: AppContext
}
