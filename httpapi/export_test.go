package httpapi

// SetBacklinkPart makes c read every backlink in parts of n, so that a
// test reads several parts of a page a thousand others link to.
func SetBacklinkPart(c *Client, n int) { c.backlinkPart = n }
