// Vitest global setup. Database preparation (migrated template) is added with the storage layer.
export default async function setup(): Promise<void> {}
