import type { CanopyCore } from '../core.js'

/**
 * A group of the API's operations. A method is one `this.core.request(method, path, spec, options)` call: the path
 * is the OpenAPI document's, so its body, parameters and answer are typed from the generated contract.
 */
export abstract class Resource {
  constructor(protected readonly core: CanopyCore) {}
}
