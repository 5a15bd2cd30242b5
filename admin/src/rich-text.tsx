import DOMPurify from 'dompurify'
import { useEffect, useRef } from 'preact/hooks'

/**
 * What a description may keep: DOMPurify's defaults (no script, no event handler, no
 * `javascript:` link) less what the page's policy would refuse or what could pass for the
 * page's own markup: inline styles, classes and ids, forms and their controls.
 */
DOMPurify.setConfig({
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'select', 'textarea', 'dialog'],
  FORBID_ATTR: ['style', 'class', 'id'],
  RETURN_DOM_FRAGMENT: true,
})
// setConfig also creates DOMPurify's Trusted Types policy now, when the page loads: the name
// the CSP allows is taken before anything else could claim it.

/**
 * A description (HTML, as Shopify keeps it) rendered through DOMPurify. The sanitized nodes are
 * moved into the page as a DOM fragment: this code assigns no string to `innerHTML`, and the
 * one Trusted Types policy the page's CSP allows (`dompurify`) is DOMPurify's own, used to parse.
 */
export function RichText({ html, label }: { html: string; label: string }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    box.current?.replaceChildren(DOMPurify.sanitize(html) as unknown as DocumentFragment)
  }, [html])
  return <div class="rich-text" ref={box} role="region" aria-label={label} />
}
