// Package pdfgen writes small PDF files for tests and benchmarks: pages of
// text in Helvetica, pages without text, a document encrypted with a
// password, and a page whose content inflates far beyond its size.
package pdfgen

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"fmt"
	"strings"
)

// Options say what else a document has.
type Options struct {
	// Title is the document's Title metadata.
	Title string
	// UserPassword, when set, encrypts the document (RC4, 40 bits): a
	// reader needs it to open the file.
	UserPassword string
	// Inflate, when above 0, adds to the first page a content stream of
	// that many zero bytes, compressed.
	Inflate int
}

// padding is the standard security handler's password padding.
var padding = []byte("\x28\xbf\x4e\x5e\x4e\x75\x8a\x41\x64\x00\x4e\x56\xff\xfa\x01\x08\x2e\x2e\x00\xb6\xd0\x68\x3e\x80\x2f\x0c\xa9\xfe\x64\x53\x69\x7a")

func pad(pw string) []byte { return append([]byte(pw), padding...)[:32] }

func rc4Of(key, data []byte) []byte {
	c, _ := rc4.NewCipher(key)
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// escape writes a string as a PDF literal string's content.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}

// Write returns a PDF whose pages hold the lines given, one page a slice;
// a page with no lines has no text.
func Write(pages [][]string, opts Options) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(s string) int {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), s)
		return len(offs)
	}
	stream := func(dict string, data []byte) int {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n<< %s /Length %d >>\nstream\n", len(offs), dict, len(data))
		b.Write(data)
		b.WriteString("\nendstream\nendobj\n")
		return len(offs)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	n := len(pages)
	kids := make([]string, n)
	first := 4 // objects 1-3 are the catalog, the page tree and the font
	if opts.Inflate > 0 {
		first++
	}
	per := 2
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", first+per*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	var bomb int
	if opts.Inflate > 0 {
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
		zeros := make([]byte, 1<<20)
		for left := opts.Inflate; left > 0; left -= len(zeros) {
			w.Write(zeros[:min(left, len(zeros))])
		}
		w.Close()
		bomb = stream("/Filter /FlateDecode", z.Bytes())
	}
	for i, lines := range pages {
		var c bytes.Buffer
		if len(lines) > 0 {
			c.WriteString("BT /F1 11 Tf 72 740 Td 14 TL\n")
			for _, l := range lines {
				fmt.Fprintf(&c, "(%s) Tj T*\n", escape(l))
			}
			c.WriteString("ET")
		}
		contents := fmt.Sprintf("%d 0 R", first+per*i+1)
		if i == 0 && bomb > 0 {
			contents = fmt.Sprintf("[%d 0 R %s]", bomb, contents)
		}
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %s >>", contents))
		stream("", c.Bytes())
	}
	info := 0
	if opts.Title != "" {
		info = obj(fmt.Sprintf("<< /Title (%s) >>", escape(opts.Title)))
	}
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R", len(offs)+1)
	if info > 0 {
		trailer += fmt.Sprintf(" /Info %d 0 R", info)
	}
	if opts.UserPassword != "" {
		id := md5.Sum([]byte("cairn pdfgen"))
		o := rc4Of(func() []byte { s := md5.Sum(pad("owner")); return s[:5] }(), pad(opts.UserPassword))
		perms := int32(-4)
		var p [4]byte
		binary.LittleEndian.PutUint32(p[:], uint32(perms))
		h := md5.New()
		h.Write(pad(opts.UserPassword))
		h.Write(o)
		h.Write(p[:])
		h.Write(id[:])
		key := h.Sum(nil)[:5]
		u := rc4Of(key, padding)
		enc := obj(fmt.Sprintf("<< /Filter /Standard /V 1 /R 2 /O <%x> /U <%x> /P %d >>", o, u, perms))
		trailer = fmt.Sprintf("/Size %d /Root 1 0 R /Encrypt %d 0 R /ID [<%x> <%x>]", len(offs)+1, enc, id, id)
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, x)
	return b.Bytes()
}
