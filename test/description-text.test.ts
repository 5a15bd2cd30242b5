import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { descriptionText } from '../src/search/documents/description-text.js'
import { documentWords, foldedText, searchWords } from '../src/search/documents/fold.js'

/** The words search finds in a description. */
const words = (html: string) => searchWords(descriptionText(html))

describe('description search text', () => {
  it('leaves plain text as it is: a lone <, a & that starts no entity', () => {
    for (const text of ['a < b', 'AT&T', 'Fish & chips', '1<2 cm', '5 > 3', 'R&D; a <= b']) {
      assert.equal(descriptionText(text), text)
    }
    assert.deepEqual(words('AT&T'), ['at', 't'])
    assert.equal(descriptionText(null), '')
    assert.equal(descriptionText(''), '')
  })

  it('block tags, <br> and &nbsp; separate words; inline tags do not', () => {
    assert.deepEqual(words('<p>one</p><p>two</p>'), ['one', 'two'])
    assert.deepEqual(words('<div>one</div>two<h2>three</h2>'), ['one', 'two', 'three'])
    assert.deepEqual(words('<ul><li>a</li><li>b</li></ul>'), ['a', 'b'])
    assert.deepEqual(words('<table><tr><td>x</td><td>y</td></tr></table>'), ['x', 'y'])
    assert.deepEqual(words('line<br>break<br/>again'), ['line', 'break', 'again'])
    assert.deepEqual(words('foo&nbsp;bar\u00a0baz'), ['foo', 'bar', 'baz'])
    assert.deepEqual(words('wo<span>rd</span> <b>T</b>-shirt <em>x</em><i>y</i>'), [
      'word',
      't',
      'shirt',
      'xy',
    ])
    // Unknown elements (word processors' <o:p>) are inline, as a browser shows them.
    assert.deepEqual(words('ab<o:p>cd</o:p>'), ['abcd'])
  })

  it('decodes entities, named and numeric', () => {
    assert.deepEqual(words('Caf&eacute; &amp; cr&#232;me &#x44;&lt;b&gt;'), [
      'cafe',
      'creme',
      'd',
      'b',
    ])
    assert.equal(descriptionText('AT&amp;T'), 'AT&T')
  })

  it('tags, attribute values, comments, scripts and styles are no words', () => {
    assert.deepEqual(
      words(
        '<p style="color: red" data-mce-fragment="1" class="span">Soft</p>' +
          '<a href="https://example.com/style">link</a><img src="x.png" alt="picture">',
      ),
      ['soft', 'link'],
    )
    assert.deepEqual(words('a<!-- hidden words -->b'), ['ab'])
    assert.deepEqual(words('<script>var hidden = "<p>x</p>"</script>shown'), ['shown'])
    assert.deepEqual(words('<style>.span { color: red }</style>shown'), ['shown'])
    assert.deepEqual(words('<noscript>hidden</noscript><template>hidden</template>ok'), ['ok'])
  })

  it('reads malformed HTML as a browser does', () => {
    assert.deepEqual(words('<p>unclosed <b>bold <i>both</p>after'), [
      'unclosed',
      'bold',
      'both',
      'after',
    ])
    assert.deepEqual(words('</div>stray end</span>tags'), ['stray', 'endtags'])
    assert.deepEqual(words('<p class="a>broken'), [])
    assert.deepEqual(words('text <!-- never closed'), ['text'])
    assert.deepEqual(words('<<p>>x'), ['x'])
    // `<` before a letter starts a tag, as on a page.
    assert.deepEqual(words('x<y and z'), ['x'])
  })

  it('a Shopify description keeps only its visible words', () => {
    const html =
      '<p data-mce-fragment="1"><span style="font-family: -apple-system;" data-mce-fragment="1">' +
      'Teak&nbsp;<strong>bench</strong></span></p>\n<style><!-- .x { width: 100% } --></style>' +
      '<meta charset="utf-8"><ul><li><span>Seats 3</span></li></ul>'
    assert.deepEqual(words(html), ['teak', 'bench', 'seats', '3'])
  })
})

describe('ø in search words', () => {
  it('q spells ø oe; a document holds both spellings of a word with ø', () => {
    assert.deepEqual(searchWords('Ø'), ['oe'])
    assert.deepEqual(searchWords('Bjørn ØL'), ['bjoern', 'oel'])
    assert.deepEqual(documentWords('Bjørn Øl, Ø 12 mm'), [
      'bjoern',
      'bjorn',
      'oel',
      'ol',
      'oe',
      'o',
      '12',
      'mm',
    ])
    assert.equal(foldedText(['Crème', 'plain']), 'creme plain')
  })
})
