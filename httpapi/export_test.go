package httpapi

// SetPart makes c read every backlink and finding in parts of n, so that
// a test reads several parts of a long list.
func SetPart(c *Client, n int) { c.part = n }
