export const SCOPES = ['read', 'write'] as const

export type Scope = (typeof SCOPES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

/** Whether a key with `granted` may do what needs `needed`: `write` includes `read`. */
export function allows(granted: readonly Scope[], needed: Scope): boolean {
  return granted.includes(needed) || (needed === 'read' && granted.includes('write'))
}
