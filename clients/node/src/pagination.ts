// Auto-pagination over the API's keyset pages ({ hasMore, data }): `await list(…)` is the first page,
// `for await (const item of list(…))` walks every page, fetching each only when the previous one is used up.

export interface Page<Item> {
  hasMore: boolean
  data: Item[]
}

export interface Pager<Item, P extends Page<Item>> {
  /** Fetches one page; `cursor` is undefined for the first. */
  fetch(cursor: string | undefined): Promise<P>
  /** The cursor for the page after `page` (its last item's id, or its first when walking backwards). */
  next(page: P): string | undefined
  /** Walking backwards (endingBefore): items come newest first, each page reversed. */
  backwards?: boolean
}

export class PagePromise<Item, P extends Page<Item> = Page<Item>> implements PromiseLike<P>, AsyncIterable<Item> {
  #first: Promise<P> | undefined
  readonly #pager: Pager<Item, P>

  constructor(pager: Pager<Item, P>) {
    this.#pager = pager
  }

  /** The first page, fetched once however often it is awaited or iterated. */
  #firstPage(): Promise<P> {
    this.#first ??= this.#pager.fetch(undefined)
    return this.#first
  }

  then<A = P, B = never>(
    onFulfilled?: ((page: P) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onFulfilled, onRejected)
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<P | B> {
    return this.#firstPage().catch(onRejected)
  }

  /** Every page in turn. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let page = await this.#firstPage()
    for (;;) {
      yield page
      const cursor = page.hasMore ? this.#pager.next(page) : undefined
      if (cursor === undefined) return
      page = await this.#pager.fetch(cursor)
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) {
      const items = this.#pager.backwards ? [...page.data].reverse() : page.data
      yield* items
    }
  }

  /** Every item into an array, refusing to hold more than `limit` (a window with millions of records would not fit). */
  async toArray(options: { limit: number }): Promise<Item[]> {
    const items: Item[] = []
    for await (const item of this) {
      if (items.length >= options.limit) throw new RangeError(`more than ${options.limit} items: raise limit, or iterate with for await`)
      items.push(item)
    }
    return items
  }
}
