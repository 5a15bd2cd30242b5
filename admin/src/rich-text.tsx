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

/** A `<style>` element, its content and all. */
const STYLE_ELEMENT = /<style\b[^>]*>[\s\S]*?(?:<\/style\s*>|$)/gi
/** A start tag, its attributes' quoted values taken whole (they may hold `>`). */
const START_TAG = /<[a-z][^\s/>]*(?:[^>"']|"[^"]*"|'[^']*')*>/gi
/** A `style` attribute inside a start tag, with its value. */
const STYLE_ATTRIBUTE = /\sstyle(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?(?=[\s/>])/gi

/**
 * The description without its inline styles, before any parser sees it: Chromium reports each
 * `style` attribute or element it parses as a violation of the page's policy (`style-src
 * 'self'`), even in a document that is never shown. This is not what keeps the page safe
 * (DOMPurify is, and the policy would refuse a style that slipped through): it keeps the
 * console quiet.
 */
export function withoutInlineStyles(html: string): string {
  return html
    .replace(STYLE_ELEMENT, '')
    .replace(START_TAG, (tag) => tag.replace(STYLE_ATTRIBUTE, ''))
}

/**
 * A description (HTML, as Shopify keeps it) rendered through DOMPurify. The sanitized nodes are
 * moved into the page as a DOM fragment: this code assigns no string to `innerHTML`, and the
 * one Trusted Types policy the page's CSP allows (`dompurify`) is DOMPurify's own, used to parse.
 */
export function RichText({ html, label }: { html: string; label: string }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    box.current?.replaceChildren(
      DOMPurify.sanitize(withoutInlineStyles(html)) as unknown as DocumentFragment,
    )
  }, [html])
  return <div class="rich-text" ref={box} role="region" aria-label={label} />
}
