import { parseFragment } from 'parse5'

/**
 * The elements whose box a page shows apart from the text around it (the HTML standard's
 * rendering section: `display: block`, `list-item`, the table's parts, and the form controls
 * and embedded content that stand as boxes): their start and end separate words. Every other
 * element, unknown ones included (`<o:p>` of word processors), is inline, as a browser shows
 * it: `<b>T</b>-shirt` and `wo<span>rd</span>` are one word.
 */
const SEPARATING = new Set([
  'address',
  'article',
  'aside',
  'audio',
  'blockquote',
  'body',
  'br',
  'button',
  'canvas',
  'caption',
  'center',
  'col',
  'colgroup',
  'dd',
  'details',
  'dialog',
  'dir',
  'div',
  'dl',
  'dt',
  'embed',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'frameset',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'html',
  'iframe',
  'img',
  'input',
  'legend',
  'li',
  'listing',
  'main',
  'menu',
  'meter',
  'nav',
  'object',
  'ol',
  'optgroup',
  'option',
  'p',
  'picture',
  'plaintext',
  'pre',
  'progress',
  'search',
  'section',
  'select',
  'summary',
  'svg',
  'table',
  'tbody',
  'td',
  'textarea',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
  'video',
  'xmp',
])

/**
 * The elements whose content a page does not show as text: scripts, styles, templates,
 * `noscript` (a page with scripts shows nothing of it) and the fallback content of embedded
 * content (shown only where it cannot be played or framed).
 */
const HIDDEN = new Set([
  'audio',
  'canvas',
  'head',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'object',
  'script',
  'style',
  'template',
  'title',
  'video',
])

/** What of the tree this walk reads (parse5's default tree adapter). */
interface Node {
  nodeName: string
  value?: string
  childNodes?: Node[]
}

/**
 * The text of a product's description as a page shows it (contract, part 4): read with an
 * HTML5 parser (parse5, docs/decisions/0058-description-search-text.md), so tags, attribute
 * values, comments, scripts and styles are no words, entities are decoded, and block tags,
 * `<br>` and `&nbsp;` separate words while inline tags do not. A text without `<` or `&` is
 * returned as it is (plain text, the common case, costs nothing); any other is read as a page
 * reads it, so `a < b` and `AT&T` keep their words and `a<b` starts a tag.
 */
export function descriptionText(description: string | null | undefined): string {
  if (!description) return ''
  if (!/[<&]/.test(description)) return description
  const parts: string[] = []
  const walk = (nodes: readonly Node[]): void => {
    for (const node of nodes) {
      if (node.nodeName === '#text') {
        parts.push(node.value!)
      } else if (node.childNodes !== undefined) {
        const separates = SEPARATING.has(node.nodeName)
        if (separates) parts.push(' ')
        if (!HIDDEN.has(node.nodeName)) walk(node.childNodes)
        if (separates) parts.push(' ')
      }
      // Comments, doctypes: nothing.
    }
  }
  walk((parseFragment(description) as unknown as Node).childNodes!)
  return parts.join('').replace(/\u00a0/g, ' ')
}
