// An operator import (catalogue, emission factors, exchange rates) that failed validation: every problem found.
export class ImportError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `the file is invalid:\n  - ${problems.slice(0, 50).join('\n  - ')}${problems.length > 50 ? `\n  - … ${problems.length - 50} more` : ''}`,
    )
    this.name = 'ImportError'
  }
}
