// Command probly is the command-line front end: `probly serve` runs the
// Redis-protocol server, `probly bloom …` builds and queries filter files.
// See internal/cli for the commands; main only maps errors to exit codes.
package main

import (
	"os"

	"github.com/probly/probly/internal/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
