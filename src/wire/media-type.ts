// The media type of a Content-Type or Accept element: lower-case, parameters after
// ';' dropped, as nodes compare them. One rule for the proxy's parsers and the sim's.

/** `Application/JSON; charset=utf-8` → `application/json`; absent → ''. */
export function mediaType(header: string | undefined): string {
  if (header === undefined) return '';
  // Every request and node answer has one or two: sliced, not split into an array.
  const parameters = header.indexOf(';');
  return (parameters < 0 ? header : header.slice(0, parameters)).trim().toLowerCase();
}
