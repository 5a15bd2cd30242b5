import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileLinearPattern } from '../src/attributes/values/linear-regex.js'
import {
  checkValue,
  validationsProblems,
  valueRules,
} from '../src/attributes/values/metafield-types.js'

describe('metafield value rules', () => {
  it('number_decimal counts decimals as JSON writes them', () => {
    const rules = valueRules('number_decimal', {})
    for (const ok of [1, 1.5, 0.123456789, 1e-9, -2.5e3, 1e21]) {
      assert.deepEqual(checkValue(rules, ok), { value: ok }, String(ok))
    }
    for (const bad of [0.1234567891, 1e-10, 1.5e-9]) {
      assert.ok('problem' in checkValue(rules, bad), String(bad))
    }
  })

  it('date_time takes offsets and fractions, answers UTC with Z and milliseconds', () => {
    const rules = valueRules('date_time', {})
    const cases: [string, string | undefined][] = [
      ['2026-11-30T23:30:00-01:00', '2026-12-01T00:30:00.000Z'],
      ['2026-11-30T10:15:30.123456Z', '2026-11-30T10:15:30.123Z'],
      ['2026-11-30T10:15Z', '2026-11-30T10:15:00.000Z'],
      ['2024-02-30T10:00:00Z', undefined],
      ['2026-11-30T24:00:00Z', undefined],
      ['2026-11-30T10:00:00+25:00', undefined],
      ['2026-11-30 10:00:00Z', undefined],
    ]
    for (const [sent, answered] of cases) {
      const checked = checkValue(rules, sent)
      if (answered === undefined) assert.ok('problem' in checked, sent)
      else assert.deepEqual(checked, { value: answered }, sent)
    }
  })

  it('text length counts characters, not UTF-16 units', () => {
    const rules = valueRules('single_line_text_field', { max: 2 })
    assert.deepEqual(checkValue(rules, '😀😀'), { value: '😀😀' })
    assert.ok('problem' in checkValue(rules, '😀😀😀'))
  })

  it('validations must fit the type', () => {
    assert.deepEqual(validationsProblems('number_decimal', { min: -1.5, max: 2.25 }), [])
    assert.deepEqual(validationsProblems('list.single_line_text_field', { choices: ['a'] }), [])
    assert.equal(validationsProblems('color', { regex: 'a' }).length, 1)
    assert.equal(validationsProblems('url', { max: 3 }).length, 1)
  })

  it('a pattern runs in linear time: 65,535 characters against (a+)+$ in under 50 ms', () => {
    for (const source of ['(a+)+$', '(a|aa)*c', '(x+x+)+y', '^(([a-z])+.)+[A-Z]([a-z])+$']) {
      const pattern = compileLinearPattern(source)
      assert.ok(typeof pattern !== 'string', source)
      const text = `${'a'.repeat(65_534)}!`
      pattern.matchesWhole(text)
      const start = performance.now()
      assert.equal(pattern.matchesWhole(text), false)
      const took = performance.now() - start
      assert.ok(took < 50, `${source} took ${took} ms`)
    }
  })

  it('refuses back-references and lookaround', () => {
    for (const source of ['(a)\\1', '(?=a)', '(?!a)', '(?<=a)b', '(?<!a)b', '\\k<x>']) {
      assert.equal(typeof compileLinearPattern(source), 'string', source)
    }
  })
})
