import { type Session, useFocusHeading } from './ui.js'

/** Import a Shopify product CSV (`#/imports`), follow one import (`#/imports/<id>`), export. */
export function ImportExportPage(_props: { id: string | null; session: Session }) {
  const heading = useFocusHeading()
  return (
    <h1 tabIndex={-1} ref={heading}>
      Import & export
    </h1>
  )
}
