import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, call, canWrite, session } from './api.js'
import { ProductList } from './products.js'
import { ProductPage } from './product.js'
import { ImportExportPage } from './imports.js'
import { CollectionList } from './collections.js'
import { CollectionPage } from './collection.js'
import { MetafieldDefinitionsPage } from './metafields.js'
import type { Session } from './ui.js'
import { WebhookEndpointPage, WebhookEndpoints } from './webhooks.js'

type Route =
  | { screen: 'list' }
  | { screen: 'new' }
  | { screen: 'product'; id: string }
  | { screen: 'imports'; id: string | null }
  | { screen: 'webhooks' }
  | { screen: 'webhook'; id: string }
  | { screen: 'attributes' }
  | { screen: 'collections' }
  | { screen: 'collection'; id: string | null }

/** The screen a hash names: `#/products/<id>`, `#/imports/<id>`, `#/webhooks/<id>`, ... */
function currentRoute(): Route {
  const path = location.hash.replace(/^#/, '')
  if (path === '/products/new') return { screen: 'new' }
  if (path === '/imports') return { screen: 'imports', id: null }
  if (path === '/webhooks') return { screen: 'webhooks' }
  if (path === '/attributes') return { screen: 'attributes' }
  if (path === '/collections') return { screen: 'collections' }
  if (path === '/collections/new') return { screen: 'collection', id: null }
  const collection = /^\/collections\/([^/?#]+)$/.exec(path)
  if (collection) return { screen: 'collection', id: decodeURIComponent(collection[1]!) }
  const match = /^\/(products|imports|webhooks)\/([^/?#]+)$/.exec(path)
  if (match) {
    const id = decodeURIComponent(match[2]!)
    if (match[1] === 'products') return { screen: 'product', id }
    if (match[1] === 'imports') return { screen: 'imports', id }
    return { screen: 'webhook', id }
  }
  return { screen: 'list' }
}

/** The part of the page a route belongs to, for the navigation's current link. */
function section(route: Route): 'products' | 'collections' | 'imports' | 'webhooks' | 'attributes' {
  if (route.screen === 'collections' || route.screen === 'collection') return 'collections'
  if (route.screen === 'imports') return 'imports'
  if (route.screen === 'attributes') return 'attributes'
  if (route.screen === 'webhooks' || route.screen === 'webhook') return 'webhooks'
  return 'products'
}

const SECTIONS = [
  { id: 'products', href: '#/products', label: 'Products' },
  { id: 'collections', href: '#/collections', label: 'Collections' },
  { id: 'imports', href: '#/imports', label: 'Import & export' },
  { id: 'webhooks', href: '#/webhooks', label: 'Webhooks' },
  { id: 'attributes', href: '#/attributes', label: 'Custom attributes' },
] as const

function SignIn({ message, onSignedIn }: { message: string; onSignedIn(writable: boolean): void }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState(message)
  const [busy, setBusy] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => input.current?.focus(), [])
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError('')
    const trimmed = key.trim()
    try {
      // Any read proves the key; the answer's message says why one is refused.
      await call('GET', '/products?limit=1', { key: trimmed })
      const writable = await canWrite(trimmed)
      session.signIn(trimmed)
      onSignedIn(writable)
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught))
      input.current?.focus()
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin" id="main">
      <form class="card signin-card" onSubmit={submit} noValidate>
        <h1>Catalogue admin</h1>
        <p class="muted">Sign in with an API key of your store.</p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={key}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'signin-error' : 'signin-help'}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <p id="signin-help" class="help">
          Made with <code>catalog keys create</code>. Kept in this tab only, until you sign out or
          close it.
        </p>
        {error && (
          <p id="signin-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
      </form>
    </main>
  )
}

function App() {
  const [route, setRoute] = useState<Route>(currentRoute)
  const [signedIn, setSignedIn] = useState(session.key() !== null)
  const [writable, setWritable] = useState<boolean | null>(null)
  const [message, setMessage] = useState('')

  useEffect(() => {
    const onHash = () => setRoute(currentRoute())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])

  const signOut = (why = '') => {
    session.signOut()
    setSignedIn(false)
    setWritable(null)
    setMessage(why)
  }

  // A key kept from before a reload of the tab: find out again what it may do.
  useEffect(() => {
    const key = session.key()
    if (!signedIn || writable !== null || !key) return
    canWrite(key).then(setWritable, (error: unknown) =>
      signOut(error instanceof Error ? error.message : String(error)),
    )
  }, [signedIn, writable])

  if (!signedIn) {
    return (
      <SignIn
        message={message}
        onSignedIn={(canEdit) => {
          setMessage('')
          setWritable(canEdit)
          setSignedIn(true)
        }}
      />
    )
  }
  if (writable === null) return <p class="loading">Loading…</p>

  const shared: Session = {
    writable,
    onError: (error) => {
      if (error instanceof ApiError && error.status === 401) signOut(error.message)
    },
  }
  return (
    <>
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="#/products">
          Catalogue admin
        </a>
        <nav aria-label="Sections">
          {SECTIONS.map((link) => (
            <a
              href={link.href}
              aria-current={section(route) === link.id ? 'page' : undefined}
              key={link.id}
            >
              {link.label}
            </a>
          ))}
        </nav>
        <span class="role">{writable ? 'Can edit' : 'Read only'}</span>
        <button type="button" class="ghost" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {route.screen === 'list' && <ProductList session={shared} />}
        {route.screen === 'new' &&
          (writable ? (
            <ProductPage key="new" id={null} session={shared} />
          ) : (
            <p>This key may only read.</p>
          ))}
        {route.screen === 'product' && (
          <ProductPage key={route.id} id={route.id} session={shared} />
        )}
        {route.screen === 'imports' && (
          <ImportExportPage key={route.id ?? ''} id={route.id} session={shared} />
        )}
        {route.screen === 'webhooks' && <WebhookEndpoints session={shared} />}
        {route.screen === 'attributes' && <MetafieldDefinitionsPage session={shared} />}
        {route.screen === 'collections' && <CollectionList session={shared} />}
        {route.screen === 'collection' && (
          <CollectionPage key={route.id ?? 'new'} id={route.id} session={shared} />
        )}
        {route.screen === 'webhook' && (
          <WebhookEndpointPage key={route.id} id={route.id} session={shared} />
        )}
      </main>
    </>
  )
}

function skipToMain(event: Event) {
  // The hash is the router's: move focus without changing it.
  event.preventDefault()
  document.getElementById('main')?.focus()
}

render(<App />, document.getElementById('app')!)
