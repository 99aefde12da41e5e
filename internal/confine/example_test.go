package confine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cairn/internal/confine"
)

func ExampleRun() {
	dir, err := os.MkdirTemp("", "confine-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	temp := filepath.Join(dir, ".tmp")
	if err := os.Mkdir(temp, 0o700); err != nil {
		fmt.Println(err)
		return
	}

	res, err := confine.Run(context.Background(), confine.Spec{
		Argv:       []string{"sh", "-c", `read name; echo "hello $name" | tee greeting.txt`},
		Dir:        dir,
		Temp:       temp,
		Stdin:      []byte("world\n"),
		Timeout:    time.Minute,
		Inactivity: 10 * time.Second,
		Output:     func(stream, line string) { fmt.Printf("%s: %s\n", stream, line) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("exit", res.ExitCode)
	// Output:
	// stdout: hello world
	// exit 0
}
