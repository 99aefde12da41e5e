package vaultgen_test

import (
	"fmt"
	"strings"

	"cairn/internal/vaultgen"
)

func ExampleNew() {
	v := vaultgen.New(vaultgen.Config{Pages: 10000})
	page := v.Page(0)
	fmt.Println(page.Path)
	fmt.Println(strings.SplitN(string(page.Data), "\n", 4)[1])
	fmt.Println(strings.Join(v.Queries(3, 1), " / "))
	// Output:
	// analyses/chyber-tielust-saidearn-ta.md
	// title: Chyber Tielust Saidearn Ta
	// earith / slast / oskoapy vinybroun
}

func ExampleVault_Files() {
	v := vaultgen.New(vaultgen.Config{Pages: 100, Raw: true})
	n := 0
	for f := range v.Files() {
		if n < 3 {
			fmt.Println(f.Path)
		}
		n++
	}
	fmt.Println(n, "files")
	// Output:
	// index.md
	// log.md
	// analyses/chyber-tielust-saidearn-ta.md
	// 124 files
}
