// api.md §1: one config value, the vendor, names the header prefix and the BCS media type.

export interface VendorNames {
  vendor: string;
  /** lower-case header prefix, e.g. "x-node-" */
  headerPrefix: string;
  /** the BCS view request media type, e.g. "application/x.node.view_function+bcs" */
  viewBcsMediaType: string;
}

export const VENDOR_PATTERN = /^[a-z]+$/;

export function vendorNames(vendor: string): VendorNames {
  if (!VENDOR_PATTERN.test(vendor)) throw new Error(`vendor must match ${VENDOR_PATTERN}: ${vendor}`);
  return {
    vendor,
    headerPrefix: `x-${vendor}-`,
    viewBcsMediaType: `application/x.${vendor}.view_function+bcs`,
  };
}
