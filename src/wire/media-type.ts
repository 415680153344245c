// The media type of a Content-Type or Accept element: lower-case, parameters after
// ';' dropped, as nodes compare them. One rule for the proxy's parsers and the sim's.

/** `Application/JSON; charset=utf-8` → `application/json`; absent → ''. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}
